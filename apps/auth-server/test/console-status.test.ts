import { expect, test } from '@jest/globals';
import { createAppMetrics } from '@portcullis/observability';
import type { Context } from 'koa';
import { registryRefusals, textRefusals } from '../src/admin/console/pages/status.js';

// The status page's recent 5xx and 429 counts: the `http_responses_recent` gauge both apps
// register (packages/observability), read from this server's registry and from another app's
// /metrics text.

function appAnswering(clock: { ms: number }) {
  const metrics = createAppMetrics({ defaultMetrics: false, now: () => clock.ms });
  const answer = async (...statuses: number[]) => {
    for (const [i, status] of statuses.entries()) {
      const ctx = { method: i % 2 ? 'GET' : 'POST', status, _matchedRoute: `/r${i % 3}` };
      await metrics.middleware(ctx as unknown as Context, () => Promise.resolve());
    }
  };
  return { ...metrics, answer };
}

test('5xx and 429 responses are counted from the registry and from its Prometheus text alike', async () => {
  const { registry, answer } = appAnswering({ ms: Date.UTC(2026, 10, 27, 8) });
  await answer(200, 500, 503, 503, 429, 404, 429, 429, 302);
  const expected = { serverErrors: 3, rateLimited: 3 };
  expect(await registryRefusals(registry)).toEqual(expected);
  expect(textRefusals(await registry.metrics())).toEqual(expected);
});

test('the counts are of the last 15 minutes: older answers drop out, minute by minute', async () => {
  const clock = { ms: Date.UTC(2026, 10, 27, 8, 0, 30) };
  const { registry, answer } = appAnswering(clock);
  const minutes = (n: number) => (clock.ms += n * 60_000);
  await answer(500, 500); // 08:00
  minutes(5);
  await answer(429); // 08:05
  minutes(9);
  await answer(502); // 08:14
  expect(await registryRefusals(registry)).toEqual({ serverErrors: 3, rateLimited: 1 });
  minutes(1); // 08:15: 08:00's minute is 15 minutes back
  expect(await registryRefusals(registry)).toEqual({ serverErrors: 1, rateLimited: 1 });
  minutes(5); // 08:20
  expect(await registryRefusals(registry)).toEqual({ serverErrors: 1, rateLimited: 0 });
  expect(textRefusals(await registry.metrics())).toEqual({ serverErrors: 1, rateLimited: 0 });
  minutes(60); // an hour on, the same ring slots are reused
  await answer(503);
  expect(await registryRefusals(registry)).toEqual({ serverErrors: 1, rateLimited: 0 });
});

test('the text parser reads only the recent gauge', () => {
  const text = `# HELP http_responses_recent Responses answered 5xx, and 429, in the last 15 minutes
# TYPE http_responses_recent gauge
http_responses_recent{class="5xx"} 2
http_responses_recent{class="429"} 5
http_requests_total{method="GET",route="/b",status="429"} 50
rate_limit_rejections_total{limiter="login"} 7
`;
  expect(textRefusals(text)).toEqual({ serverErrors: 2, rateLimited: 5 });
  expect(textRefusals('')).toEqual({ serverErrors: 0, rateLimited: 0 });
});
