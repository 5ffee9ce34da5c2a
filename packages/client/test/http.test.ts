import { afterEach, describe, expect, it } from '@jest/globals';
import { ApiError, createPortcullisClient, PortcullisError, TimeoutError } from '../src/index.js';
import { delay, json, startServer } from './server.js';
import type { TestServer } from './server.js';

let server: TestServer;
afterEach(() => server?.close());

describe('timeout', () => {
  it('rejects a slow response with TimeoutError after timeoutMs', async () => {
    server = await startServer(async (_req, res) => {
      await delay(2000);
      if (!res.destroyed) json(res, 200, {});
    });
    const client = createPortcullisClient({ baseUrl: server.url, timeoutMs: 200 });
    const started = performance.now();

    const error = await client.orders.get('slow').catch((e: unknown) => e);

    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', timeoutMs: 200 });
    // Not the answer (it comes after 2 s): the client gave up first.
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(server.requests).toHaveLength(1);
  });

  it('covers a body that stalls after the headers', async () => {
    server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"id":');
      await delay(2000);
      res.end('1}');
    });
    const client = createPortcullisClient({ baseUrl: server.url, timeoutMs: 200 });
    await expect(client.orders.get('slow')).rejects.toBeInstanceOf(TimeoutError);
  });

  it('rethrows the caller’s abort reason instead of a timeout', async () => {
    server = await startServer(async (_req, res) => {
      await delay(2000);
      if (!res.destroyed) json(res, 200, {});
    });
    const client = createPortcullisClient({ baseUrl: server.url });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user left')), 50);
    await expect(client.orders.get('x', { signal: controller.signal })).rejects.toThrow(
      'user left',
    );
  });
});

describe('redirects', () => {
  it.each([301, 302, 307])('follows %i to the final resource', async (status) => {
    server = await startServer((req, res) => {
      if (req.url === '/orders/old') {
        res.writeHead(status, { Location: '/orders/new' });
        res.end();
      } else json(res, 200, { id: 'new' });
    });
    const client = createPortcullisClient({ baseUrl: server.url, accessToken: 't' });

    await expect(client.orders.get('old')).resolves.toEqual({ id: 'new' });

    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /orders/old',
      'GET /orders/new',
    ]);
    // Same origin: the bearer token travels with the redirected request.
    expect(server.requests[1]?.headers.authorization).toBe('Bearer t');
  });

  it('keeps method and body through a 307', async () => {
    server = await startServer((req, res) => {
      if (req.url === '/orders') {
        res.writeHead(307, { Location: '/v2/orders' });
        res.end();
      } else json(res, 201, { id: 'o1' });
    });
    const client = createPortcullisClient({ baseUrl: server.url });
    await client.orders.create({ customer: 'acme', amount: 5, currency: 'EUR' });
    expect(server.requests[1]).toMatchObject({ method: 'POST', url: '/v2/orders' });
    expect(JSON.parse(server.requests[1]!.body.toString())).toEqual({
      customer: 'acme',
      amount: 5,
      currency: 'EUR',
    });
  });
});

describe('ETag cache', () => {
  it('sends If-None-Match and serves the cached body on 304', async () => {
    server = await startServer((req, res) => {
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304, { ETag: '"v1"' });
        res.end();
      } else json(res, 200, { id: 'o1', version: 1 }, { ETag: '"v1"' });
    });
    const client = createPortcullisClient({ baseUrl: server.url, accessToken: 't' });

    const first = await client.request({ method: 'GET', path: '/orders/o1' });
    const second = await client.request({ method: 'GET', path: '/orders/o1' });

    expect(first).toMatchObject({ status: 200, fromCache: false, data: { id: 'o1', version: 1 } });
    expect(second).toMatchObject({ status: 304, fromCache: true, data: { id: 'o1', version: 1 } });
    expect(server.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"']);
  });

  it('keeps entries apart per credential', async () => {
    server = await startServer((_req, res) => json(res, 200, { id: 'o1' }, { ETag: '"v1"' }));
    const client = createPortcullisClient({ baseUrl: server.url, accessToken: 'alice-key' });
    await client.orders.get('o1');
    client.setAccessToken('bob-key');
    await client.orders.get('o1');
    expect(server.requests[1]?.headers['if-none-match']).toBeUndefined();
  });

  it('keeps the cache across a rotated JWT of the same subject', async () => {
    const jwt = (jti: string): string =>
      [
        'e30',
        Buffer.from(JSON.stringify({ sub: 'u1', client_id: 'web', jti })).toString('base64url'),
        'sig',
      ].join('.');
    server = await startServer((_req, res) => json(res, 200, { id: 'o1' }, { ETag: '"v1"' }));
    const client = createPortcullisClient({ baseUrl: server.url, accessToken: jwt('1') });
    await client.orders.get('o1');
    client.setAccessToken(jwt('2'));
    await client.orders.get('o1');
    expect(server.requests[1]?.headers['if-none-match']).toBe('"v1"');
  });

  it('forgets a URL after a write to it', async () => {
    server = await startServer((req, res) =>
      req.method === 'PATCH'
        ? json(res, 200, { id: 'o1', v: 2 })
        : json(res, 200, { id: 'o1' }, { ETag: '"v1"' }),
    );
    const client = createPortcullisClient({ baseUrl: server.url });
    await client.orders.get('o1');
    await client.orders.update('o1', { note: 'x' }, { ifMatch: '"v1"' });
    await client.orders.get('o1');
    expect(server.requests[1]?.headers['if-match']).toBe('"v1"');
    expect(server.requests[2]?.headers['if-none-match']).toBeUndefined();
  });
});

describe('errors', () => {
  it('maps a 422 body onto ApiError.fields', async () => {
    const body = {
      error: 'validation_failed',
      message: 'invalid body',
      fields: { amount: ['must be >= 0'] },
    };
    server = await startServer((_req, res) => json(res, 422, body));
    const client = createPortcullisClient({ baseUrl: server.url });

    const error = await client.orders
      .create({ customer: 'c', amount: -1, currency: 'EUR' })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'api',
      status: 422,
      error: 'validation_failed',
      detail: 'invalid body',
      fields: { amount: ['must be >= 0'] },
      request: { method: 'POST', url: `${server.url}/orders` },
    });
  });

  it('keeps the 403 code and tolerates bodies that are not JSON', async () => {
    server = await startServer((_req, res, { n }) => {
      if (n === 1) json(res, 403, { error: 'forbidden' });
      else {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('nope');
      }
    });
    const client = createPortcullisClient({ baseUrl: server.url });
    await expect(client.users.delete('u1')).rejects.toMatchObject({
      status: 403,
      error: 'forbidden',
      fields: undefined,
    });
    await expect(client.users.get('u1')).rejects.toMatchObject({
      status: 404,
      error: 'http_404',
      body: 'nope',
    });
  });

  it('rejects a success body that claims JSON but is not', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{oops');
    });
    const client = createPortcullisClient({ baseUrl: server.url });
    await expect(client.users.get('u1')).rejects.toBeInstanceOf(PortcullisError);
  });
});
