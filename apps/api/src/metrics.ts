import type { DenyList } from '@portcullis/claims';
import { createAppMetrics, type AppMetrics } from '@portcullis/observability';
import { Counter, Gauge } from 'prom-client';
import { RateLimitedError } from './errors.js';
import type { RateLimiters } from './rate-limits.js';

export interface ApiMetrics {
  metrics: AppMetrics;
  /** The same limiters, counting each 429 in `rate_limit_rejections_total{limiter}`. */
  limiters: RateLimiters;
}

/**
 * The API's registry: HTTP metrics plus `rate_limit_rejections_total{limiter}` and the
 * `deny_list_entries` gauge (read at scrape time from the in-memory deny list).
 */
export function createApiMetrics(options: {
  limiters: RateLimiters;
  denyList: (Pick<DenyList, 'isDenied'> & Partial<Pick<DenyList, 'size'>>) | undefined;
  defaultMetrics: boolean;
}): ApiMetrics {
  const metrics = createAppMetrics({ defaultMetrics: options.defaultMetrics });
  const rejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429 by a rate limiter',
    labelNames: ['limiter'] as const,
    registers: [metrics.registry],
  });
  const { denyList } = options;
  new Gauge({
    name: 'deny_list_entries',
    help: 'Revoked tokens, grants and subjects held in the in-memory deny list',
    registers: [metrics.registry],
    collect() {
      const size = denyList?.size?.();
      if (size !== undefined) this.set(size);
    },
  });

  const inner = options.limiters;
  const limiters: RateLimiters = {
    get store() {
      return inner.store;
    },
    async consume(name, key, limit) {
      try {
        await inner.consume(name, key, limit);
      } catch (error) {
        if (error instanceof RateLimitedError) rejections.inc({ limiter: name });
        throw error;
      }
    },
    async beginLogin(ip, email) {
      const attempt = await inner.beginLogin(ip, email);
      if (attempt.limitedBy) {
        rejections.inc({ limiter: attempt.limitedBy === 'ip' ? 'loginIp' : 'loginAccount' });
      }
      return attempt;
    },
    ready: () => inner.ready(),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { metrics, limiters };
}
