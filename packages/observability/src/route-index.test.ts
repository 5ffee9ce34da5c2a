import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Koa from 'koa';
import Router from '@koa/router';
import { indexRoutesByFirstSegment } from './route-index.js';

/** The same routes, one router indexed and one not: every request must get the same answer. */
function routes() {
  const router = new Router();
  router.use(async (ctx, next) => {
    ctx.set('X-Seen', 'yes');
    await next();
  });
  router.get('/orders', (ctx) => (ctx.body = { route: 'list' }));
  router.get('/orders/:id', (ctx) => (ctx.body = { route: 'one', id: ctx.params['id'] }));
  router.post('/orders/:id/cancel', (ctx) => (ctx.body = { route: 'cancel' }));
  router.get('/healthz', (ctx) => (ctx.body = { route: 'health' }));
  router.get('/', (ctx) => (ctx.body = { route: 'root' }));
  router.get('/:anything/raw', (ctx) => (ctx.body = { route: 'pattern' }));
  return router;
}

const servers: Array<ReturnType<Koa['listen']>> = [];
async function serve(router: Router): Promise<string> {
  const app = new Koa().use(router.routes()).use(router.allowedMethods());
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let plain: string;
let indexed: string;
beforeAll(async () => {
  plain = await serve(routes());
  indexed = await serve(indexRoutesByFirstSegment(routes()));
});
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

async function answer(base: string, method: string, path: string) {
  const res = await fetch(`${base}${path}`, { method });
  return {
    status: res.status,
    allow: res.headers.get('allow'),
    seen: res.headers.get('x-seen'),
    body: await res.text(),
  };
}

describe('indexRoutesByFirstSegment', () => {
  test.each([
    ['GET', '/orders'],
    ['GET', '/orders/'],
    ['GET', '/ORDERS/42'],
    ['GET', '/Orders/42/'],
    ['GET', '/orders/42/cancel'],
    ['POST', '/orders/42/cancel'],
    ['PUT', '/orders/42'],
    ['GET', '/healthz'],
    ['GET', '/healthz/'],
    ['GET', '/'],
    ['GET', '/orders/raw'],
    ['GET', '/elsewhere/raw'],
    ['GET', '/elsewhere'],
    ['GET', '//orders'],
    ['GET', '/%6Frders'],
  ])('%s %s answers as the plain router does', async (method, path) => {
    expect(await answer(indexed, method, path)).toEqual(await answer(plain, method, path));
  });
});
