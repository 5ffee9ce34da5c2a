import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';

/** What an inbound X-Request-Id may be: short and log-safe (no spaces, quotes or newlines). */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestIdOf(inbound: string): string {
  return REQUEST_ID.test(inbound) ? inbound : randomUUID();
}

/** What request-log puts on `ctx.state` for the handlers after it. */
export interface RequestLogState {
  requestId: string;
  /** A child of the app logger carrying `reqId`. */
  log: Logger;
}

export interface RequestLogOptions {
  /** Who made the request (e.g. the principal's subject), read once the response is ready. */
  subjectOf?: (ctx: Context) => string | undefined;
  /** Paths logged at debug instead of info (probes and scrapes every few seconds). */
  quietPaths?: readonly string[];
  /** false: log the route template, not the path (the auth server's carry interaction uids). */
  logPath?: boolean;
}

// The child logger is made on first use: most requests log nothing but their one line.
class LoggedRequestState implements RequestLogState {
  #child: Logger | undefined;
  constructor(
    private readonly base: Logger,
    readonly requestId: string,
  ) {}
  get log(): Logger {
    return (this.#child ??= this.base.child({ reqId: this.requestId }));
  }
  set log(child: Logger) {
    this.#child = child;
  }
  /** The request's line, through the child when one exists (same output either way). */
  line(level: 'info' | 'debug', line: object): void {
    if (this.#child) this.#child[level](line, 'request');
    else this.base[level]({ reqId: this.requestId, ...line }, 'request');
  }
}

/** One line per request; never headers or the query string (credentials, personal data). */
export function requestLog(logger: Logger, options: RequestLogOptions = {}): Middleware {
  const quiet = new Set(options.quietPaths ?? []);
  return async function logRequest(ctx, next) {
    const started = performance.now();
    const inbound = ctx.req.headers['x-request-id'];
    const id = requestIdOf(typeof inbound === 'string' ? inbound : '');
    const state = new LoggedRequestState(logger, id);
    // Anything an earlier middleware put on the state stays.
    ctx.state = Object.assign(state, ctx.state);
    ctx.res.setHeader('X-Request-Id', id);
    try {
      await next();
    } finally {
      const level = quiet.has(ctx.path) ? 'debug' : 'info';
      if (logger.isLevelEnabled(level)) {
        const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
        state.line(level, {
          method: ctx.method,
          path: options.logPath === false && route !== undefined ? undefined : ctx.path,
          route,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          subject: options.subjectOf?.(ctx),
        });
      }
    }
  };
}
