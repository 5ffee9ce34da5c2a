import { afterEach, describe, expect, it } from '@jest/globals';
import { createPortcullisClient } from '../src/index.js';
import { json, recordingSleep, startServer } from './server.js';
import type { RecordedRequest, TestServer } from './server.js';

let server: TestServer;
afterEach(() => server?.close());

const ORDER_ID = '0b4f6e3c-2f7e-4a8b-9b1a-5f0c1d2e3f40';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Echoes the request so tests can also check what the method returns. */
async function echoServer(status = 200): Promise<TestServer> {
  return startServer((req, res, { body }) => {
    if (req.method === 'DELETE') {
      res.writeHead(204);
      res.end();
      return;
    }
    json(res, status, {
      method: req.method,
      url: req.url,
      body: body.length ? JSON.parse(body.toString()) : null,
    });
  });
}

const line = (r: RecordedRequest | undefined): string => `${r?.method} ${r?.url}`;

describe('orders', () => {
  it('lists with repeated status, filters and offset pagination', async () => {
    server = await startServer((_req, res) =>
      json(res, 200, { items: [{ id: 'o1' }], total: 41, page: 3, limit: 20 }),
    );
    const client = createPortcullisClient({ baseUrl: server.url });

    const page = await client.orders.list({
      status: ['open', 'pending'],
      customer: 'acme & co',
      createdAfter: '2025-01-31',
      page: 3,
      limit: 20,
    });

    expect(page).toEqual({ items: [{ id: 'o1' }], total: 41, page: 3, limit: 20 });
    expect(server.requests[0]?.url).toBe(
      '/orders?status=open&status=pending&customer=acme+%26+co&createdAfter=2025-01-31&page=3&limit=20',
    );
  });

  it('maps CRUD and cancel onto the spec’s methods and paths', async () => {
    server = await echoServer();
    const client = createPortcullisClient({ baseUrl: server.url });
    const body = { customer: 'acme', amount: 100, currency: 'EUR' };

    await client.orders.get('o/1');
    await client.orders.create(body);
    await client.orders.replace('o1', { ...body, version: 2 });
    const patched = await client.orders.update('o1', { note: 'hi' });
    await expect(client.orders.delete('o1')).resolves.toBeUndefined();
    await client.orders.cancel('o1', { ifMatch: '"v3"' });
    await client.orders.confirm('o1');
    await client.orders.fulfill('o1');

    expect(server.requests.map(line)).toEqual([
      'GET /orders/o%2F1',
      'POST /orders',
      'PUT /orders/o1',
      'PATCH /orders/o1',
      'DELETE /orders/o1',
      'POST /orders/o1/cancel',
      'POST /orders/o1/confirm',
      'POST /orders/o1/fulfill',
    ]);
    expect(server.requests[5]?.headers['if-match']).toBe('"v3"');
    expect(patched).toEqual({ method: 'PATCH', url: '/orders/o1', body: { note: 'hi' } });
    expect(server.requests[1]?.headers['content-type']).toBe('application/json');
    expect(server.requests[2]?.body.toString()).toBe(JSON.stringify({ ...body, version: 2 }));
  });
});

describe('users, events, api keys', () => {
  it('uses cursor and time-based pagination parameters', async () => {
    server = await echoServer();
    const client = createPortcullisClient({ baseUrl: server.url });

    await client.users.list({ after: 'cur', limit: 5 });
    await client.users.get('u1');
    await client.users.delete('u1');
    await client.events.list({ before: new Date('2025-02-01T10:00:00Z'), limit: 50 });
    await client.payments.list({ after: 'p' });
    await client.payments.get('p1');
    await client.apiKeys.list();
    await client.apiKeys.create({ name: 'ci', permissions: ['orders:read'] });
    await client.apiKeys.get('k1');
    await client.apiKeys.revoke('k1');

    expect(server.requests.map(line)).toEqual([
      'GET /users?after=cur&limit=5',
      'GET /users/u1',
      'DELETE /users/u1',
      'GET /events?before=2025-02-01T10%3A00%3A00.000Z&limit=50',
      'GET /payments?after=p',
      'GET /payments/p1',
      'GET /api-keys',
      'POST /api-keys',
      'GET /api-keys/k1',
      'DELETE /api-keys/k1',
    ]);
    expect(JSON.parse(server.requests[7]!.body.toString())).toEqual({
      name: 'ci',
      permissions: ['orders:read'],
    });
  });
});

describe('payments', () => {
  it('generates one Idempotency-Key and reuses it on every retry', async () => {
    server = await startServer((_req, res, { n }) =>
      n <= 2 ? json(res, 503, { error: 'unavailable' }) : json(res, 201, { id: 'pay_1' }),
    );
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep: recordingSleep().sleep },
    });

    await expect(
      client.createPayment({ amount: 500, currency: 'EUR', orderId: ORDER_ID }),
    ).resolves.toEqual({
      id: 'pay_1',
    });

    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({
      amount: 500,
      currency: 'EUR',
      orderId: ORDER_ID,
    });
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys).size).toBe(1);
  });

  it('uses a new key per logical operation and the caller’s key when given', async () => {
    server = await startServer((_req, res) => json(res, 201, { id: 'pay' }));
    const client = createPortcullisClient({ baseUrl: server.url });
    await client.payments.create({ amount: 1, currency: 'EUR', orderId: ORDER_ID });
    await client.payments.create({ amount: 1, currency: 'EUR', orderId: ORDER_ID });
    await client.payments.create(
      { amount: 1, currency: 'EUR', orderId: ORDER_ID },
      { idempotencyKey: 'order-42-attempt' },
    );
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe('order-42-attempt');
  });

  it('waits out a 409 "same key in flight" and exposes the key on failure', async () => {
    server = await startServer((_req, res) => json(res, 409, { error: 'idempotency_in_flight' }));
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { maxRetries: 2, sleep: recordingSleep().sleep },
    });
    const error = await client.payments
      .create({ amount: 1, currency: 'EUR', orderId: ORDER_ID })
      .catch((e: unknown) => e);
    expect(server.requests).toHaveLength(3);
    expect(error).toMatchObject({
      status: 409,
      request: { idempotencyKey: server.requests[0]?.headers['idempotency-key'] },
    });
  });
});

describe('uploads', () => {
  it('sends multipart parts file and caption with a boundary fetch chose', async () => {
    let parsed: FormData | undefined;
    server = await startServer(async (req, res, { body }) => {
      if (req.method === 'POST') {
        // Parse with a real multipart parser (undici's), as the API would.
        parsed = await new Request('http://x/', {
          method: 'POST',
          headers: { 'Content-Type': req.headers['content-type'] ?? '' },
          body,
        }).formData();
        json(res, 201, { id: 'up1', caption: 'hello' });
      } else json(res, 200, { id: 'up1' });
    });
    const client = createPortcullisClient({ baseUrl: server.url });

    const upload = await client.uploads.upload({
      file: new File([new Uint8Array([0, 1, 2, 255])], 'pic.png', { type: 'image/png' }),
      caption: 'hello',
    });
    await client.uploads.get('up1');

    expect(upload).toEqual({ id: 'up1', caption: 'hello' });
    expect(server.requests[0]?.headers['content-type']).toMatch(
      /^multipart\/form-data; boundary=.+/,
    );
    const file = parsed?.get('file') as File;
    expect(file.name).toBe('pic.png');
    expect(file.type).toBe('image/png');
    expect([...new Uint8Array(await file.arrayBuffer())]).toEqual([0, 1, 2, 255]);
    expect(parsed?.get('caption')).toBe('hello');
    expect(line(server.requests[1])).toBe('GET /uploads/up1');
  });
});
