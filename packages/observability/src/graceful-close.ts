import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

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
  // Open connections that have carried a request: idle ones are keep-alive connections
  // between requests, not connections whose first request has not been read yet.
  const served = new Set<Socket>();
  // Keep-alive clients learn with their next response that this connection is ending.
  // First in line, so it runs before a handler that answers synchronously.
  server.prependListener('request', (req, res) => {
    const socket = req.socket;
    if (!served.has(socket)) {
      served.add(socket);
      socket.once('close', () => served.delete(socket));
    }
    if (draining && !res.headersSent) res.setHeader('Connection', 'close');
  });

  /** Ends keep-alive connections waiting between requests; a request under way stays. */
  function closeIdleKeepAlive(): void {
    for (const socket of served) {
      const response = (socket as Socket & { _httpMessage?: { finished?: boolean } | null })
        ._httpMessage;
      if (!response || response.finished) socket.destroy();
    }
  }

  async function close(): Promise<void> {
    draining = true;
    await new Promise((resolve) => setTimeout(resolve, ACCEPT_GRACE_MS));
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
      force.unref();
      // net.Server's close stops listening without http.Server's closeIdleConnections(),
      // which also resets connections accepted a moment ago whose request has not been
      // read yet: their clients sent a request and would see ECONNRESET. Those are
      // answered (with Connection: close); one that never sends anything waits for the
      // timeout.
      NetServer.prototype.close.call(server, () => {
        clearTimeout(force);
        resolve();
      });
      closeIdleKeepAlive();
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
