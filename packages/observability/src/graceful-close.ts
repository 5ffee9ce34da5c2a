import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

export interface DrainOptions {
  /**
   * Milliseconds from the start of close() after which connections still open are cut.
   * Default 8000.
   */
  timeoutMs?: number;
  /**
   * Longest time the server keeps accepting after close() began. It stops earlier, as
   * soon as no connection or request has arrived for 100 ms. Default 3000.
   */
  acceptForMs?: number;
  /**
   * After acceptForMs without a pause (no balancer took the instance out of rotation),
   * how long it goes on accepting at most, holding each request to answer it 503 once it
   * stopped listening, instead of running it. Default 1000.
   */
  refuseForMs?: number;
}

export interface ServerDrain {
  /** True once close() began: readiness reports not ready, responses say Connection: close. */
  readonly draining: boolean;
  /**
   * Keeps answering (Connection: close) until clients stop arriving, then stops
   * listening, lets in-flight requests finish (bounded by `timeoutMs`), closes idle
   * keep-alive connections, and resolves once every connection is gone.
   */
  close(): Promise<void>;
}

/**
 * Why the listener closes last, not first: closing a listening socket makes the kernel
 * reset every connection it completed that the process has not accepted yet (the accept
 * backlog), and their clients, who already sent a request, see ECONNRESET. Nothing in
 * user space can stop the kernel from completing handshakes while the backlog is read,
 * so the listener stays open, answering with `Connection: close` while /readyz fails, until
 * no connection or request has arrived for QUIET_MS (a balancer has taken the instance
 * out of rotation), and then closes right after an event-loop poll that found the
 * backlog empty. Later clients are refused before they send anything (ECONNREFUSED).
 * When clients keep arriving past acceptForMs (nothing stopped sending), requests no
 * longer run the app: each is held until the listener has closed, then answered 503 with
 * Connection: close. A client waiting for its answer makes no new connection, so arrivals
 * pause (or refuseForMs passes) and the listener closes over an empty backlog, where under
 * the app's work it held a dozen connections that had sent a request.
 * See README "Operating it", Shutdown, and docs/robustness.md.
 */
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
  let lastArrival = 0;
  // Open connections that have carried a request: idle ones are keep-alive connections
  // between requests, not connections whose first request has not been read yet.
  const served = new Set<Socket>();
  server.on('connection', () => {
    lastArrival = Date.now();
  });
  // Keep-alive clients learn with their next response that this connection is ending.
  // First in line, so it runs before a handler that answers synchronously.
  server.prependListener('request', function trackRequest(req, res) {
    lastArrival = Date.now();
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

  // Requests held while the instance refuses (refuseRequests); answered once it stopped listening.
  let held: ServerResponse[] | undefined;

  /**
   * From now on no request runs the app: each is held, unanswered, until the listener is
   * closed, then answered 503. Clients waiting for an answer open no new connection, so
   * arrivals pause and the listener closes over an empty backlog.
   */
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

  /**
   * Calls `stop(paused)` once arrivals have paused for QUIET_MS (true) or `forMs` has
   * passed (false), from a setImmediate callback: it runs right after the poll phase,
   * which accepts whatever the kernel has queued, so a connection queued while the loop
   * was busy counts as an arrival instead of being reset.
   */
  function whenArrivalsPause(forMs: number, stop: (paused: boolean) => void): void {
    const deadline = Date.now() + forMs;
    const check = () =>
      setImmediate(() => {
        const quietFor = Date.now() - lastArrival;
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
        // net.Server's close stops listening without http.Server's closeIdleConnections(),
        // which also resets connections accepted a moment ago whose request has not been
        // read yet: those are answered (with Connection: close); one that never sends
        // anything waits for the timeout.
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
