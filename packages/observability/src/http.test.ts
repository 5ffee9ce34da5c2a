import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from '@jest/globals';
import Koa from 'koa';
import Router from '@koa/router';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createLogger } from './logger.js';
import { createAppMetrics, registerRequestMetrics } from './metrics.js';
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
    const ours = new Registry();
    const requests = registerRequestMetrics(ours);
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
    // Series in and out of order, durations on a bound, between bounds and past the last.
    const requestsSeen = [
      ['GET', '/items/:id', 200, 0.001],
      ['GET', '/items/:id', 200, 0.005],
      ['POST', '/items/:id', 404, 0.0051],
      ['GET', '/items/:id', 503, 0.3],
      ['GET', '/items/:id', 200, 20],
      ['GET', 'unmatched', 404, 0.07],
      ['POST', '/items/:id', 404, 2.5],
    ] as const;
    for (const [method, route, status, seconds] of requestsSeen) {
      requests.record(method, route, status, seconds);
      const labels = { method, route, status: String(status) };
      counter.inc(labels);
      histogram.observe(labels, seconds);
    }
    // The rolling window's gauge, as a prom-client Gauge would print it: one 503 above.
    const recent = new Gauge({
      name: 'http_responses_recent',
      help: 'Responses answered 5xx, and 429, in the last 15 minutes',
      labelNames: ['class'],
      registers: [reference],
    });
    recent.set({ class: '5xx' }, 1);
    recent.set({ class: '429' }, 0);
    expect(await ours.metrics()).toBe(await reference.metrics());

    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain('route=');
    requests.record('GET', '/items/:id', 200, 0.001);
    expect(await ours.metrics()).toContain(
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
