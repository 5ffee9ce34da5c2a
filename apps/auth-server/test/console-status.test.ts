import { expect, test } from '@jest/globals';
import { createAppMetrics } from '@portcullis/observability';
import type { Context } from 'koa';
import { registryRefusals, textRefusals } from '../src/console/pages/status.js';

// The status page's 5xx and 429 counts: from this server's registry, and from another app's
// /metrics text, both written by the same request counter (packages/observability).

test('5xx and 429 responses are counted from the registry and from its Prometheus text alike', async () => {
  const { registry, middleware } = createAppMetrics({ defaultMetrics: false });
  const answered = [200, 500, 503, 503, 429, 404, 429, 429, 302];
  for (const [i, status] of answered.entries()) {
    const ctx = { method: i % 2 ? 'GET' : 'POST', status, _matchedRoute: `/r${i % 3}` };
    await middleware(ctx as unknown as Context, () => Promise.resolve());
  }
  const expected = { serverErrors: 3, rateLimited: 3 };
  expect(await registryRefusals(registry)).toEqual(expected);
  expect(textRefusals(await registry.metrics())).toEqual(expected);
});

test('the text parser reads only the request counter, whatever its labels’ order', () => {
  const text = `# HELP http_requests_total HTTP requests
# TYPE http_requests_total counter
http_requests_total{status="500",method="GET",route="/a"} 2
http_requests_total{method="GET",route="/b",status="429"} 5
http_requests_total{method="GET",route="/c",status="200"} 40
http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/a",status="500"} 2
rate_limit_rejections_total{limiter="login"} 7
`;
  expect(textRefusals(text)).toEqual({ serverErrors: 2, rateLimited: 5 });
  expect(textRefusals('')).toEqual({ serverErrors: 0, rateLimited: 0 });
});
