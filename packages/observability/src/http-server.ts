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

// Requests under the last-resort guard; malformed ones refused, logged without bytes (docs/robustness.md "The connection").

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

/** The client went away or sent non-HTTP: its failure, logged low without a stack. */
export function isClientFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as ErrorLike;
  if (typeof code === 'string' && (CLIENT_GONE.has(code) || code.startsWith('HPE_'))) return true;
  return message === 'aborted' || message === 'request aborted';
}

function describe(error: unknown): { code: unknown; reason: unknown } {
  const { code, reason, message } = error as ErrorLike;
  return { code, reason: reason ?? message };
}

/** For Koa's `app.on('error')`: client failures at debug, anything else at error. */
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

/** RFC 9112 §9.6 lingering close, bounded, so a client still sending reads the answer. */
export const LINGER_MS = 2000;

type LingeringSocket = Socket & { destroySoon?: () => void };

// Node closes a `Connection: close` socket once answered, and the body still arriving draws a reset
// that discards the answer: end our side instead, drain the body, close after LINGER_MS at most.
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

export function createHttpServer(listener: RequestListener, logger: ConnectionLogger): Server {
  const server = createServer(guardRequests(listener));
  server.on('clientError', refuseMalformed(logger));
  lingerAfterEarlyAnswers(server);
  return server;
}
