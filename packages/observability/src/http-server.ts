import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { guardRequests } from './request-guard.js';

/**
 * The HTTP server both apps listen with (docs/robustness.md, "The connection"): requests
 * run under the last-resort guard, and malformed requests are refused and logged without
 * their bytes.
 */

interface ConnectionLogger {
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Node's own answers to parser errors (http.Server's default clientError handling). */
const PARSER_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/** Codes of a client that reset or abandoned its connection: routine, not a fault. */
const CLIENT_GONE = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'HPE_INVALID_EOF_STATE',
]);

type ErrorLike = { code?: unknown; message?: unknown; reason?: unknown };

/**
 * Whether `error` says the client went away (reset, hung up mid-body) or sent bytes that
 * are not HTTP: its failure, logged low and without a stack, never a server error.
 */
export function isClientFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as ErrorLike;
  if (typeof code === 'string' && (CLIENT_GONE.has(code) || code.startsWith('HPE_'))) return true;
  return message === 'aborted' || message === 'request aborted';
}

/** What a log line says of a client's failure: its code and reason, no stack, no bytes. */
function describe(error: unknown): { code: unknown; reason: unknown } {
  const { code, reason, message } = error as ErrorLike;
  return { code, reason: reason ?? message };
}

/**
 * For Koa's `app.on('error')`, which hears of errors after a response began (a client
 * that left mid-response, a parser error on the socket): client failures at debug,
 * anything else at error, never through console.error.
 */
export function logAppErrors(logger: ConnectionLogger): (error: unknown) => void {
  return function logAppError(error) {
    if (isClientFailure(error)) logger.debug(describe(error), 'client went away');
    else logger.error({ err: error }, 'response failed');
  };
}

/** Answers a request Node's parser refused (as Node does by default) and logs why, without its bytes. */
function refuseMalformed(logger: ConnectionLogger) {
  return function onClientError(error: Error & { code?: string }, socket: Duplex) {
    const code = error.code ?? '';
    if (CLIENT_GONE.has(code) || !socket.writable) {
      logger.debug(describe(error), 'client went away');
      socket.destroy();
      return;
    }
    logger.info(describe(error), 'malformed request refused');
    const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })
      ._httpMessage;
    if (!response?.headersSent) {
      const status = PARSER_STATUS[code] ?? 400;
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      );
    }
    socket.destroy();
  };
}

/** An HTTP server for `listener` as described above; `logger` hears of malformed requests. */
export function createHttpServer(listener: RequestListener, logger: ConnectionLogger): Server {
  const server = createServer(guardRequests(listener));
  server.on('clientError', refuseMalformed(logger));
  return server;
}
