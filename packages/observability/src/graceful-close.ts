import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

export interface DrainOptions {
  /** Milliseconds from the start of close() after which open connections are cut. Default 8000. */
  timeoutMs?: number;
  /** Longest time it keeps accepting after close() (less once activity pauses for 100 ms). Default 3000. */
  acceptForMs?: number;
  /** After acceptForMs without a pause, how long it holds requests to answer them 503. Default 1000. */
  refuseForMs?: number;
}

export interface ServerDrain {
  /** True once close() began: readiness reports not ready, responses say Connection: close. */
  readonly draining: boolean;
  /** Drains (see docs/robustness.md "Shutdown") and resolves once every connection is gone. */
  close(): Promise<void>;
}

// The listener closes last: closing it resets the accept backlog (docs/robustness.md "Shutdown").
const QUIET_MS = 100;
// Below the 10 s hard stop of runServices, which then still has time to close the pools.
const DEFAULT_TIMEOUT_MS = 8000;
// Within Kubernetes' default 30 s grace period, leaving most of timeoutMs to the drain.
const DEFAULT_ACCEPT_FOR_MS = 3000;
const DEFAULT_REFUSE_FOR_MS = 1000;
const SHUTTING_DOWN = JSON.stringify({
  error: 'temporarily_unavailable',
  message: 'the server is shutting down; retry',
});

/** The answer to every request once an instance under load is about to stop listening. */
function answerShuttingDown(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(503, {
    Connection: 'close',
    'Retry-After': '1',
    'Content-Type': 'application/json',
    'Cache-Control': 'no-store',
  });
  res.end(SHUTTING_DOWN);
}

type HttpSocket = Socket & { _httpMessage?: { finished?: boolean } | null };

/** Graceful shutdown of one HTTP server; attach it right after creating the server. */
export function drainOnClose(server: Server, options: DrainOptions = {}): ServerDrain {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const acceptForMs = Math.min(options.acceptForMs ?? DEFAULT_ACCEPT_FOR_MS, timeoutMs);
  const refuseForMs = options.refuseForMs ?? DEFAULT_REFUSE_FOR_MS;
  let draining = false;
  let closing: Promise<void> | undefined;
  // A connection, a request or an answer sent: a client waiting for its answer sends nothing,
  // so an answer restarts the quiet period (docs/robustness.md "Shutdown").
  let lastActivity = 0;
  const active = () => {
    lastActivity = Date.now();
  };
  // Connections that have carried a request; idle keep-alive ones are closed, unread ones answered.
  const served = new Set<Socket>();
  server.on('connection', active);
  // First in line, so it runs before a handler that answers synchronously.
  server.prependListener('request', function trackRequest(req, res) {
    active();
    res.once('finish', active);
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
      const response = (socket as HttpSocket)._httpMessage;
      if (!response || response.finished) socket.destroy();
    }
  }

  let held: ServerResponse[] | undefined;

  /** From now on each request is held, then answered 503 once the listener has closed. */
  function refuseRequests(): void {
    for (const listener of server.listeners('request')) {
      if (listener.name !== 'trackRequest')
        server.removeListener('request', listener as (...args: unknown[]) => void);
    }
    held = [];
    server.on('request', function holdRequest(req: IncomingMessage, res: ServerResponse) {
      if (held) held.push(res);
      else answerShuttingDown(req, res);
    });
  }

  function answerHeld(): void {
    const waiting = held ?? [];
    held = undefined;
    for (const res of waiting) if (!res.destroyed) answerShuttingDown(res.req, res);
  }

  // From setImmediate, right after the poll phase accepted what the kernel queued, so a
  // connection queued while the loop was busy counts as an arrival instead of being reset.
  function whenArrivalsPause(forMs: number, stop: (paused: boolean) => void): void {
    const deadline = Date.now() + forMs;
    const check = () =>
      setImmediate(() => {
        const quietFor = Date.now() - lastActivity;
        if (quietFor >= QUIET_MS || Date.now() >= deadline) stop(quietFor >= QUIET_MS);
        else setTimeout(check, Math.min(QUIET_MS - quietFor, deadline - Date.now()));
      });
    check();
  }

  function close(): Promise<void> {
    draining = true;
    // Arrivals before the signal count: the quiet period starts from the last of them.
    return new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
      force.unref();
      const stopListening = () => {
        // net.Server's close: http.Server's also resets accepted connections whose request is unread.
        NetServer.prototype.close.call(server, () => {
          clearTimeout(force);
          resolve();
        });
        answerHeld();
        closeIdleKeepAlive();
      };
      whenArrivalsPause(acceptForMs, (paused) => {
        if (paused || refuseForMs <= 0) return stopListening();
        refuseRequests();
        whenArrivalsPause(refuseForMs, stopListening);
      });
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
