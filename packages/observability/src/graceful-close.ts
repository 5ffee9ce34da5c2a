import type { Server } from 'node:http';

export interface DrainOptions {
  /** Milliseconds in-flight requests get before their connections are cut. Default 8000. */
  timeoutMs?: number;
}

export interface ServerDrain {
  /** True once close() began: readiness reports not ready, responses say Connection: close. */
  readonly draining: boolean;
  /**
   * Stops accepting, lets in-flight requests finish (bounded by `timeoutMs`), closes idle
   * keep-alive connections, and resolves once every connection is gone.
   */
  close(): Promise<void>;
}

/**
 * A short pause between "draining" and closing the listening socket: connections the
 * kernel already completed but the event loop has not accepted yet would otherwise be
 * reset when the socket closes. 100 ms covers a busy loop, and is short next to the
 * grace periods of orchestrators (Kubernetes: 30 s).
 */
const ACCEPT_GRACE_MS = 100;
// Below the 10 s hard stop of runServices, which then still has time to close the pools.
const DEFAULT_TIMEOUT_MS = 8000;

/** Graceful shutdown of one HTTP server; attach it right after creating the server. */
export function drainOnClose(server: Server, options: DrainOptions = {}): ServerDrain {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let draining = false;
  let closing: Promise<void> | undefined;
  // Keep-alive clients learn with their next response that this connection is ending.
  server.on('request', (_req, res) => {
    if (draining && !res.headersSent) res.setHeader('Connection', 'close');
  });

  async function close(): Promise<void> {
    draining = true;
    await new Promise((resolve) => setTimeout(resolve, ACCEPT_GRACE_MS));
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
  }

  return {
    get draining() {
      return draining;
    },
    close() {
      closing ??= server.listening ? close() : Promise.resolve();
      return closing;
    },
  };
}
