import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from '@jest/globals';
import Koa from 'koa';
import Router from '@koa/router';
import { Counter, Histogram, Registry } from 'prom-client';
import { createLogger } from './logger.js';
import { createAppMetrics } from './metrics.js';
import { createReadinessCheck, readinessEndpoint } from './readiness.js';
import { requestIdOf, requestLog } from './request-log.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(app: { listen(port: number, host: string): Server }): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('requestIdOf', () => {
  it('keeps a sane inbound id and replaces anything else', () => {
    expect(requestIdOf('abc-123_x.y')).toBe('abc-123_x.y');
    expect(requestIdOf('x'.repeat(128))).toBe('x'.repeat(128));
    for (const bad of ['', 'x'.repeat(129), 'a b', 'a"b', 'a\nb', 'ä']) {
      expect(requestIdOf(bad)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('requestLog and createAppMetrics', () => {
  it('logs one line per request with its id and counts by route template', async () => {
    let out = '';
    const destination = new Writable({
      write(chunk, _e, done) {
        out += String(chunk);
        done();
      },
    });
    const metrics = createAppMetrics({ defaultMetrics: false });
    const router = new Router()
      .get('/items/:id', (ctx) => {
        ctx.body = { id: ctx.params['id'] };
      })
      .get('/metrics', metrics.handler);
    const app = new Koa()
      .use(metrics.middleware)
      .use(requestLog(createLogger({ destination }), { quietPaths: ['/metrics'] }))
      .use(router.routes());
    const url = await serve(app);

    const res = await fetch(`${url}/items/42?secret=query`, {
      headers: { 'x-request-id': 'req-1', authorization: 'Bearer should-not-be-logged' },
    });
    expect(res.headers.get('x-request-id')).toBe('req-1');
    await fetch(`${url}/items/43`);
    await fetch(`${url}/nowhere/44`);

    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('http_requests_total{method="GET",route="/items/:id",status="200"} 2');
    expect(text).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).not.toContain('/items/42');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/items/:id"');

    const line = JSON.parse(out.split('\n')[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      reqId: 'req-1',
      method: 'GET',
      path: '/items/42',
      route: '/items/:id',
      status: 200,
      msg: 'request',
    });
    expect(out).not.toContain('secret=query');
    expect(out).not.toContain('should-not-be-logged');
  });

  it("exports the text prom-client's own Counter and Histogram would", async () => {
    const metrics = createAppMetrics({ defaultMetrics: false });
    const statuses = [200, 200, 404, 503, 200];
    let i = 0;
    const app = new Koa().use(metrics.middleware).use((ctx) => {
      (ctx as { _matchedRoute?: string })._matchedRoute = '/items/:id';
      ctx.status = statuses[i++]!;
      ctx.body = 'x';
    });
    const url = await serve(app);
    for (const method of ['GET', 'GET', 'POST', 'GET']) await fetch(`${url}/items/1`, { method });
    const ours = await metrics.registry.metrics();

    // The same requests counted by prom-client itself, with the durations ours recorded.
    const reference = new Registry();
    const counter = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [reference],
    });
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration until the response was ready, in seconds',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [reference],
    });
    const sums = new Map(
      [...ours.matchAll(/^http_request_duration_seconds_sum\{(.*)\} (.*)$/gm)].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    );
    for (const [method, status] of [
      ['GET', 200],
      ['GET', 200],
      ['POST', 404],
      ['GET', 503],
    ] as const) {
      const labels = { method, route: '/items/:id', status: String(status) };
      counter.inc(labels);
    }
    // Each series' observations: its sum split evenly keeps the text's sum and count; the
    // buckets then differ only where the real durations straddled a bound, which they
    // cannot at these sub-millisecond durations (all in the first bucket).
    for (const [labels, n] of [
      [{ method: 'GET', route: '/items/:id', status: '200' }, 2],
      [{ method: 'POST', route: '/items/:id', status: '404' }, 1],
      [{ method: 'GET', route: '/items/:id', status: '503' }, 1],
    ] as const) {
      const key = `method="${labels.method}",route="${labels.route}",status="${labels.status}"`;
      for (let k = 0; k < n; k++) histogram.observe(labels, sums.get(key)! / n);
    }
    const expected = await reference.metrics();
    // Float sums may differ in the last digit after the split; compare everything else.
    const withoutSums = (text: string) =>
      text.replace(/^(http_request_duration_seconds_sum\{.*\}) .*$/gm, '$1');
    expect(withoutSums(ours)).toBe(withoutSums(expected));
    expect(ours).toContain('http_requests_total{method="POST",route="/items/:id",status="404"} 1');

    metrics.registry.resetMetrics();
    expect(await metrics.registry.metrics()).not.toContain('route="/items/:id"');
    await fetch(`${url}/items/1`);
    expect(await metrics.registry.metrics()).toContain(
      'http_requests_total{method="GET",route="/items/:id",status="200"} 1',
    );
  });

  it('gives each app its own registry (no duplicate-metric error)', () => {
    const a = createAppMetrics({ defaultMetrics: true });
    const b = createAppMetrics({ defaultMetrics: true });
    expect(a.registry).not.toBe(b.registry);
  });
});

describe('readiness', () => {
  it('names what is down, bounded by the timeout, and answers 503 with Retry-After', async () => {
    let draining = false;
    const check = createReadinessCheck(
      {
        database: () => Promise.resolve(),
        redis: () => new Promise(() => {}),
        absent: undefined,
      },
      { timeoutMs: 50, draining: () => draining },
    );
    expect(await check()).toEqual({
      ready: false,
      body: { status: 'unavailable', database: 'ok', redis: 'unreachable' },
    });
    const url = await serve(
      new Koa().use(async (ctx) => {
        await readinessEndpoint(check)(ctx);
      }),
    );
    const res = await fetch(url);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');

    const healthy = createReadinessCheck(
      { database: () => Promise.resolve() },
      { draining: () => draining },
    );
    expect((await healthy()).body).toEqual({ status: 'ready', database: 'ok' });
    draining = true;
    expect(await healthy()).toEqual({
      ready: false,
      body: { status: 'shutting_down', database: 'ok' },
    });
  });
});
