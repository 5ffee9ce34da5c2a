import type { Context, Middleware } from 'koa';
import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';

/** Label of requests no route matched: raw URLs would make the label set unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

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

interface ExportedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{
    labels: Record<string, string | number>;
    /** Labels written after `labels` (prom-client puts a bucket's `le` first). */
    sharedLabels?: Record<string, string>;
    value: number;
    metricName?: string;
  }>;
}

type ExportedGauge = Omit<ExportedMetric, 'type'> & { type: 'gauge' };

/** The gauge of RequestMetrics.recent(). */
export const RECENT_RESPONSES = 'http_responses_recent';

interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative), BUCKETS' order. */
  buckets: number[];
}

function entryOf<K, V>(map: Map<K, Map<string | number, V>>, key: K): Map<string | number, V> {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = new Map()));
  return value;
}

/** Minutes `http_responses_recent` looks back (the console's status page reads it). */
export const RECENT_MINUTES = 15;
const MINUTE_MS = 60_000;

/** The classes `http_responses_recent` counts: answers an operator looks at first. */
export const RECENT_CLASSES = ['5xx', '429'] as const;
export type RecentClass = (typeof RECENT_CLASSES)[number];

/** Counts per minute over the last RECENT_MINUTES, in a ring of minute buckets. */
class RecentResponses {
  readonly #minuteOf = new Float64Array(RECENT_MINUTES).fill(-1);
  readonly #counts = {
    '5xx': new Float64Array(RECENT_MINUTES),
    '429': new Float64Array(RECENT_MINUTES),
  };

  constructor(private readonly now: () => number) {}

  add(kind: RecentClass): void {
    const minute = Math.floor(this.now() / MINUTE_MS);
    const slot = minute % RECENT_MINUTES;
    if (this.#minuteOf[slot] !== minute) {
      this.#minuteOf[slot] = minute;
      for (const counts of Object.values(this.#counts)) counts[slot] = 0;
    }
    this.#counts[kind][slot]! += 1;
  }

  total(kind: RecentClass): number {
    const oldest = Math.floor(this.now() / MINUTE_MS) - RECENT_MINUTES;
    let sum = 0;
    for (let slot = 0; slot < RECENT_MINUTES; slot++) {
      if (this.#minuteOf[slot]! > oldest) sum += this.#counts[kind][slot]!;
    }
    return sum;
  }

  reset(): void {
    this.#minuteOf.fill(-1);
  }
}

// Counted in plain numbers, handed to prom-client at scrape time: its own Counter and Histogram
// cost more CPU per observation than the rest of a small request's bookkeeping.
export class RequestMetrics {
  /** By method, then route, then status: no key is built per request. */
  readonly #series = new Map<string, Map<string | number, Map<string | number, RequestSeries>>>();
  readonly #all: RequestSeries[] = [];
  readonly #recent: RecentResponses;

  constructor(now: () => number = Date.now) {
    this.#recent = new RecentResponses(now);
  }

  record(method: string, route: string, status: number, seconds: number): void {
    if (status >= 500) this.#recent.add('5xx');
    else if (status === 429) this.#recent.add('429');
    const byStatus = entryOf(entryOf(this.#series, method), route);
    let series = byStatus.get(status);
    if (series === undefined) {
      series = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        buckets: BUCKETS.map(() => 0),
      };
      byStatus.set(status, series);
      this.#all.push(series);
    }
    series.count += 1;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    if (bucket < BUCKETS.length) series.buckets[bucket]! += 1;
  }

  reset(): void {
    this.#series.clear();
    this.#all.length = 0;
    this.#recent.reset();
  }

  recent(): ExportedGauge {
    return {
      name: RECENT_RESPONSES,
      help: `Responses answered 5xx, and 429, in the last ${RECENT_MINUTES} minutes`,
      type: 'gauge',
      aggregator: 'sum',
      values: RECENT_CLASSES.map((kind) => ({
        labels: { class: kind },
        value: this.#recent.total(kind),
      })),
    };
  }

  counter(): ExportedMetric {
    return {
      name: 'http_requests_total',
      help: 'HTTP requests by method, route template and status',
      type: 'counter',
      aggregator: 'sum',
      values: this.#all.map((s) => ({ labels: s.labels, value: s.count })),
    };
  }

  histogram(): ExportedMetric {
    const name = 'http_request_duration_seconds';
    const values: ExportedMetric['values'] = [];
    for (const s of this.#all) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({
          labels: { le },
          sharedLabels: s.labels,
          value: cumulative,
          metricName: `${name}_bucket`,
        });
      });
      values.push(
        {
          labels: { le: '+Inf' },
          sharedLabels: s.labels,
          value: s.count,
          metricName: `${name}_bucket`,
        },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum` },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count` },
      );
    }
    return {
      name,
      help: 'HTTP request duration until the response was ready, in seconds',
      type: 'histogram',
      aggregator: 'sum',
      values,
    };
  }
}

/** Registers the request metrics on `registry`, read at scrape time. */
export function registerRequestMetrics(
  registry: Registry,
  now: () => number = Date.now,
): RequestMetrics {
  const requests = new RequestMetrics(now);
  for (const [name, get] of [
    ['http_requests_total', () => requests.counter()],
    ['http_request_duration_seconds', () => requests.histogram()],
    [RECENT_RESPONSES, () => requests.recent()],
  ] as const) {
    registry.registerMetric({
      name,
      get: () => Promise.resolve(get()),
      reset: () => requests.reset(),
    } as unknown as Metric);
  }
  return requests;
}

/** An app's registry with the HTTP metrics and, unless disabled, prom-client's process metrics. */
export function createAppMetrics(
  options: { defaultMetrics?: boolean; now?: () => number } = {},
): AppMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const requests = registerRequestMetrics(registry, options.now);

  const middleware: Middleware = async function httpMetrics(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      // The error renderers sit inside this middleware, so ctx.status is final for most requests.
      requests.record(
        METHODS.has(ctx.method) ? ctx.method : 'OTHER',
        routeOf(ctx),
        ctx.status,
        (performance.now() - started) / 1000,
      );
    }
  };

  const handler: Middleware = async function metricsEndpoint(ctx) {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };

  return { registry, middleware, handler };
}
