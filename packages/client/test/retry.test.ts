import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ApiError,
  backoffDelay,
  createPortcullisClient,
  NetworkError,
  parseRetryAfter,
} from '../src/index.js';
import { json, recordingSleep, startServer } from './server.js';
import type { TestServer } from './server.js';

let server: TestServer;
afterEach(() => server?.close());

describe('429 Too Many Requests', () => {
  it('waits Retry-After (real clock) before retrying', async () => {
    server = await startServer((_req, res, { n }) => {
      if (n === 1) json(res, 429, { error: 'rate_limited' }, { 'Retry-After': '1' });
      else json(res, 200, { items: [], total: 0, page: 1, limit: 20 });
    });
    const client = createPortcullisClient({ baseUrl: server.url });

    await client.orders.list();

    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it('adds jittered exponential backoff for further 429s and gives up after maxRetries', async () => {
    server = await startServer((_req, res) =>
      json(res, 429, { error: 'rate_limited' }, { 'Retry-After': '2' }),
    );
    const { sleeps, sleep } = recordingSleep();
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { maxRetries: 3, baseDelayMs: 100, random: () => 0.5, sleep },
    });

    const error = await client.orders.get('x').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, error: 'rate_limited', retryAfterMs: 2000 });
    expect(server.requests).toHaveLength(4);
    // 2000 exactly, then 2000 + random * min(cap, base * 2^n).
    expect(sleeps).toEqual([2000, 2000 + 100, 2000 + 200]);
  });

  it('retries a POST too: a 429 was refused before any processing', async () => {
    server = await startServer((_req, res, { n }) =>
      n === 1
        ? json(res, 429, { error: 'rate_limited' }, { 'Retry-After': '0' })
        : json(res, 201, { id: 'o1' }),
    );
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep: recordingSleep().sleep },
    });
    await expect(
      client.orders.create({ customer: 'c', amount: 1, currency: 'EUR' }),
    ).resolves.toEqual({ id: 'o1' });
    expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(server.requests[1]?.body.toString()).toBe(server.requests[0]?.body.toString());
  });

  it('does not call back early when Retry-After exceeds the cap', async () => {
    server = await startServer((_req, res) =>
      json(res, 429, { error: 'rate_limited' }, { 'Retry-After': '120' }),
    );
    const { sleeps, sleep } = recordingSleep();
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { maxDelayMs: 10_000, sleep },
    });
    await expect(client.orders.get('x')).rejects.toMatchObject({
      status: 429,
      retryAfterMs: 120_000,
    });
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('5xx and network errors', () => {
  it('retries a GET through 503, 503, 200 with backoff', async () => {
    server = await startServer((_req, res, { n }) =>
      n <= 2 ? json(res, 503, { error: 'unavailable' }) : json(res, 200, { id: 'o1' }),
    );
    const { sleeps, sleep } = recordingSleep();
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { baseDelayMs: 100, random: () => 1, sleep },
    });

    await expect(client.orders.get('o1')).resolves.toEqual({ id: 'o1' });

    expect(server.requests).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it('stops after maxRetries and throws the last ApiError', async () => {
    server = await startServer((_req, res) => json(res, 502, { error: 'bad_gateway' }));
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { maxRetries: 2, sleep: recordingSleep().sleep },
    });
    await expect(client.orders.delete('o1')).rejects.toMatchObject({
      status: 502,
      error: 'bad_gateway',
    });
    expect(server.requests).toHaveLength(3);
  });

  it('never repeats a POST without Idempotency-Key after a 5xx', async () => {
    server = await startServer((_req, res) => json(res, 500, { error: 'internal' }));
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep: recordingSleep().sleep },
    });
    await expect(client.orders.cancel('o1')).rejects.toMatchObject({ status: 500 });
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry other errors (400, 404, 501)', async () => {
    server = await startServer((_req, res, { n }) =>
      json(res, [400, 404, 501][n - 1] ?? 200, { error: 'x' }),
    );
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep: recordingSleep().sleep },
    });
    for (const status of [400, 404, 501]) {
      await expect(client.users.get('u')).rejects.toMatchObject({ status });
    }
    expect(server.requests).toHaveLength(3);
  });

  it('retries an idempotent request after the connection drops', async () => {
    server = await startServer((req, res, { n }) => {
      if (n === 1) req.socket.destroy();
      else json(res, 200, { id: 'u1' });
    });
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep: recordingSleep().sleep },
    });
    await expect(client.users.get('u1')).resolves.toEqual({ id: 'u1' });
    expect(server.requests).toHaveLength(2);
  });

  it('reports a dead server as NetworkError after bounded retries', async () => {
    server = await startServer((req) => void req.socket.destroy());
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { maxRetries: 1, sleep: recordingSleep().sleep },
    });
    const error = await client.users.get('u1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({
      code: 'network',
      request: { method: 'GET', url: `${server.url}/users/u1` },
    });
    expect(server.requests).toHaveLength(2);
  });
});

describe('timing helpers', () => {
  it('parses Retry-After as seconds or HTTP-date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('uses full jitter below min(cap, base * 2^n)', () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.999 };
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, policy))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffDelay(5, { ...policy, random: () => 0 })).toBe(0);
  });
});
