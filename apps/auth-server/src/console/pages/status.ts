import type { ReadinessReport } from '@portcullis/observability';
import type { Registry } from 'prom-client';
import { consoleOf, type ConsolePages } from '../kit.js';

/** Where the status page reads from besides the admin API. */
export interface StatusSources {
  /** This server's readiness: database and, with REDIS_URL, Redis. */
  authReady: () => Promise<ReadinessReport>;
  /** This server's Prometheus registry (requests by status). */
  authMetrics: Registry;
  /** CONSOLE_API_URL: the API's /readyz and /metrics. */
  apiUrl: string;
}

/** GET /console/status (docs/console.md "Status"). */
export function statusPages({ router }: ConsolePages, sources: StatusSources): void {
  void sources;
  router.get('/console/status', function showStatus(ctx) {
    const c = consoleOf(ctx);
    c.render(c.ui.t('console:nav.status'), c.notice(), { section: 'status' });
  });
}
