import { afterEach, describe, expect, it } from '@jest/globals';
import { createPortcullisClient, UnauthorizedError } from '../src/index.js';
import { json, startServer } from './server.js';
import type { TestServer } from './server.js';

let server: TestServer;
afterEach(() => server.close());

/** Accepts only `Bearer good-*`, answering 401 to anything else. */
async function guardedServer(valid: (token: string) => boolean): Promise<TestServer> {
  return startServer((req, res) => {
    const token = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if (!valid(token)) {
      json(
        res,
        401,
        { error: 'invalid_token' },
        { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      );
      return;
    }
    json(res, 200, { id: 'o1', token });
  });
}

describe('401 handling', () => {
  it('refreshes once and retries with the new token', async () => {
    server = await guardedServer((t) => t === 'fresh');
    let refreshes = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'expired',
      refresh: async () => {
        refreshes++;
        return 'fresh';
      },
    });

    const order = await client.orders.get('o1');

    expect(order).toEqual({ id: 'o1', token: 'fresh' });
    expect(refreshes).toBe(1);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer expired',
      'Bearer fresh',
    ]);

    // The refreshed token stays in memory: the next call uses it straight away.
    await client.orders.get('o1', { headers: { 'Cache-Control': 'no-cache' } });
    expect(server.requests[2]?.headers.authorization).toBe('Bearer fresh');
    expect(refreshes).toBe(1);
  });

  it('signs out and throws UnauthorizedError when the refresh fails', async () => {
    server = await guardedServer(() => false);
    let signOuts = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'expired',
      refresh: async () => {
        throw new Error('refresh token reused');
      },
      onSignOut: () => {
        signOuts++;
      },
    });

    const error = await client.orders.get('o1').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ code: 'unauthorized', status: 401, error: 'invalid_token' });
    expect((error as Error).cause).toEqual(new Error('refresh token reused'));
    expect(signOuts).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('does not loop when the refreshed token is rejected too', async () => {
    server = await guardedServer(() => false);
    let refreshes = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'a',
      refresh: async () => `b${++refreshes}`,
    });

    await expect(client.orders.get('o1')).rejects.toBeInstanceOf(UnauthorizedError);
    expect(refreshes).toBe(1);
    expect(server.requests).toHaveLength(2);
  });

  it('shares one refresh between concurrent 401s (rotating refresh tokens must not race)', async () => {
    server = await guardedServer((t) => t === 'fresh');
    let refreshes = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'expired',
      etagCache: false,
      refresh: async () => {
        refreshes++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return 'fresh';
      },
    });

    const results = await Promise.all([
      client.orders.get('a'),
      client.orders.get('b'),
      client.users.get('c'),
    ]);

    expect(results.map((r) => (r as unknown as { token: string }).token)).toEqual([
      'fresh',
      'fresh',
      'fresh',
    ]);
    expect(refreshes).toBe(1);
  });

  it('asks getAccessToken when memory is empty and sends no header for anonymous calls', async () => {
    server = await guardedServer((t) => t === 'from-provider');
    const client = createPortcullisClient({
      baseUrl: server.url,
      getAccessToken: () => 'from-provider',
    });
    await client.orders.get('o1');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer from-provider');

    const anonymous = createPortcullisClient({ baseUrl: server.url });
    await expect(anonymous.orders.get('o1')).rejects.toBeInstanceOf(UnauthorizedError);
    expect(server.requests[1]?.headers.authorization).toBeUndefined();
  });
});
