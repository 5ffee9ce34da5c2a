import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

// Errors that escape every handler end only their own request (docs/robustness.md "The last-resort guard").

interface GuardLogger {
  error(obj: object, msg?: string): void;
  fatal(obj: object, msg?: string): void;
}

/** One is a bug in one request's path; ten a minute is state gone wrong that a restart clears. */
export const ESCAPED_ERROR_LIMIT = 10;
export const ESCAPED_ERROR_WINDOW_MS = 60_000;

interface Installed {
  logger: GuardLogger;
  onRepeatedEscapes: () => void;
  /** When the last ESCAPED_ERROR_LIMIT escaped errors happened, oldest first. */
  times: number[];
  /** Set once the limit asked for a shutdown, so that it is asked for (and logged) once. */
  stopping: boolean;
}

const currentResponse = new AsyncLocalStorage<ServerResponse>();
let installed: Installed | undefined;

/** Wraps a server's request listener so that work done for a request can be traced back to it. */
export function guardRequests(listener: RequestListener): RequestListener {
  return function guardedRequest(req: IncomingMessage, res: ServerResponse) {
    currentResponse.run(res, listener, req, res);
  };
}

/** Ends the response of the request an escaped error came from: a 500 if nothing was sent yet. */
function failRequest(res: ServerResponse): void {
  if (res.writableEnded || res.destroyed) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(500, { 'content-type': 'application/json', connection: 'close' });
  res.end('{"error":"internal_error"}');
}

/** Records an escaped error; true once ESCAPED_ERROR_LIMIT fell within the window. */
function limitReached(guard: Installed): boolean {
  const now = Date.now();
  guard.times.push(now);
  if (guard.times.length > ESCAPED_ERROR_LIMIT) guard.times.shift();
  return (
    guard.times.length === ESCAPED_ERROR_LIMIT && now - guard.times[0]! < ESCAPED_ERROR_WINDOW_MS
  );
}

function onEscape(kind: 'uncaught exception' | 'unhandled rejection', error: unknown): void {
  const res = currentResponse.getStore();
  const guard = installed!;
  const stop = !guard.stopping && limitReached(guard);
  guard.logger.error(
    { err: error, duringRequest: res !== undefined },
    `${kind}: ${res ? 'its request failed' : 'no request affected'}; ` +
      (stop || guard.stopping ? 'the process stops' : 'the process serves on'),
  );
  if (res) failRequest(res);
  if (!stop) return;
  guard.stopping = true;
  guard.logger.fatal(
    { limit: ESCAPED_ERROR_LIMIT, windowMs: ESCAPED_ERROR_WINDOW_MS },
    `${ESCAPED_ERROR_LIMIT} errors escaped every handler within ${ESCAPED_ERROR_WINDOW_MS / 1000} s: ` +
      'shutting down so that a fresh process takes over',
  );
  guard.onRepeatedEscapes();
}

/** Once, after start-up succeeded (a failed start must still end the process). */
export function installLastResortGuard(logger: GuardLogger, onRepeatedEscapes: () => void): void {
  const first = installed === undefined;
  installed = { logger, onRepeatedEscapes, times: [], stopping: false };
  if (!first) return;
  process.on('uncaughtException', (error) => onEscape('uncaught exception', error));
  process.on('unhandledRejection', (reason) => onEscape('unhandled rejection', reason));
}
