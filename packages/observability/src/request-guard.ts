import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/**
 * The last line of defence of "one request never takes a process down" (docs/robustness.md):
 * an error that escapes every handler — an `error` event nobody listens to, a throw in a
 * timer or a rejected promise nobody awaits — is logged and ends only the request it came
 * from, found through the async context the request started. Other requests go on.
 * Handlers still map every error they expect; this catches the ones nobody expected.
 */

interface GuardLogger {
  error(obj: object, msg?: string): void;
}

const currentResponse = new AsyncLocalStorage<ServerResponse>();
let installed: GuardLogger | undefined;

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

function onEscape(kind: 'uncaught exception' | 'unhandled rejection', error: unknown): void {
  const res = currentResponse.getStore();
  installed?.error(
    { err: error, duringRequest: res !== undefined },
    `${kind}: ${res ? 'its request failed' : 'no request affected'}; the process serves on`,
  );
  if (res) failRequest(res);
}

/**
 * Installs the process-wide handlers, once; call it after start-up succeeded (a failure to
 * start must still end the process).
 */
export function installLastResortGuard(logger: GuardLogger): void {
  if (installed) {
    installed = logger;
    return;
  }
  installed = logger;
  process.on('uncaughtException', (error) => onEscape('uncaught exception', error));
  process.on('unhandledRejection', (reason) => onEscape('unhandled rejection', reason));
}
