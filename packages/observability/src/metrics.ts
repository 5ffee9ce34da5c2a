import type { Context, Middleware } from 'koa';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Label of requests no route matched: raw URLs would make the label set unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

const LABELS = ['method', 'route', 'status'] as const;
// Seconds; fine below 100 ms where most requests land, coarse up to the client timeout.
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface AppMetrics {
  /** This app's own registry: two apps in one process never share metric names. */
  registry: Registry;
  /** Counts and times every request by method, route template and status. */
  middleware: Middleware;
  /** GET /metrics: the Prometheus text exposition format. */
  handler: Middleware;
}

/** The router's path template (@koa/router and oidc-provider both set `_matchedRoute`). */
function routeOf(ctx: Context): string {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' ? route : UNMATCHED_ROUTE;
}

/**
 * Creates an app's registry with the HTTP metrics (`http_requests_total`,
 * `http_request_duration_seconds`) and, unless `defaultMetrics` is false, the process
 * metrics of prom-client. Register app-specific metrics on `registry`.
 */
export function createAppMetrics(options: { defaultMetrics?: boolean } = {}): AppMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: LABELS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration until the response was ready, in seconds',
    labelNames: LABELS,
    buckets: BUCKETS,
    registers: [registry],
  });

  // One child per (method, route, status), made at its first request: prom-client's
  // per-call label objects and timers cost more than the request's own bookkeeping.
  const children = new Map<string, { inc(): void; observe(seconds: number): void }>();
  const childOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (!child) {
      const labels = [method, route, String(status)];
      const counter = requests.labels(...labels);
      const histogram = duration.labels(...labels);
      child = { inc: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      children.set(key, child);
    }
    return child;
  };

  const middleware: Middleware = async function httpMetrics(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      // A thrown error rendered further out still leaves its status here; the error
      // renderers sit inside this middleware, so ctx.status is final for most requests.
      const child = childOf(
        METHODS.has(ctx.method) ? ctx.method : 'OTHER',
        routeOf(ctx),
        ctx.status,
      );
      child.inc();
      child.observe((performance.now() - started) / 1000);
    }
  };

  const handler: Middleware = async function metricsEndpoint(ctx) {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };

  return { registry, middleware, handler };
}
