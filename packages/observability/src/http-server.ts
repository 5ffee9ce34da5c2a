import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
} from 'node:http';
import type { Socket } from 'node:net';
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

/**
 * How long a connection closed after an answer that came before its request's body was
 * read keeps reading (and dropping) that body: RFC 9112 §9.6's lingering close, so a
 * client still sending reads the answer instead of a reset that discards it. Bounded, so
 * a client that never stops sending holds nothing for long.
 */
export const LINGER_MS = 2000;

type LingeringSocket = Socket & { destroySoon?: () => void };

/**
 * Node closes a `Connection: close` connection as soon as the answer is written; with the
 * request's body still arriving, the kernel then answers it with a reset, and the client
 * (EPIPE) never reads the answer. Instead: end our side after the answer (FIN), read the
 * rest of the body into nothing, and close when the client does or after LINGER_MS.
 */
function lingerAfterEarlyAnswers(server: Server): void {
  const requestOf = new WeakMap<Socket, IncomingMessage>();
  server.prependListener('request', (req) => requestOf.set(req.socket, req));
  server.on('connection', (socket: LingeringSocket) => {
    const destroySoon = socket.destroySoon;
    if (typeof destroySoon !== 'function') return;
    socket.destroySoon = function lingeringClose() {
      const req = requestOf.get(socket);
      if (!req || req.complete || req.destroyed) return destroySoon.call(socket);
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
      socket.end();
      // A body parser that gave up paused the request: read the rest, dropped.
      req.removeAllListeners('data');
      req.resume();
      req.once('end', () => socket.destroy());
    };
  });
}

/** An HTTP server for `listener` as described above; `logger` hears of malformed requests. */
export function createHttpServer(listener: RequestListener, logger: ConnectionLogger): Server {
  const server = createServer(guardRequests(listener));
  server.on('clientError', refuseMalformed(logger));
  lingerAfterEarlyAnswers(server);
  return server;
}
