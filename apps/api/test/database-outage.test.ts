/**
 * PostgreSQL going away and coming back, through a TCP proxy this test owns (the real
 * server stays up for the tests running beside this one). While it is away the API
 * answers 503 + Retry-After well inside a client's 15 s timeout; when it returns the API
 * recovers by itself, without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TcpProxy } from '@portcullis/db/testing';
import type { RunningApiServer } from '../src/index.js';
import { startProxiedApi, type ProxiedApi } from './helpers/proxied-api.js';

/** Well under the reference client's 15 s timeout. */
const CLIENT_PATIENCE_MS = 10_000;
const withPostgres = process.env['DATABASE_URL'] ? describe : describe.skip;

withPostgres('PostgreSQL outage (runs only with DATABASE_URL)', () => {
  let proxied: ProxiedApi;
  let proxy: TcpProxy;
  let api: RunningApiServer;
  let apiKey: string;

  beforeAll(async () => {
    proxied = await startProxiedApi(['orders:read']);
    ({ proxy, api, apiKey } = proxied);
  });

  afterAll(async () => {
    await proxied?.close();
  });

  const listOrders = () =>
    fetch(`${api.url}/orders`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
    });

  it('answers 503 with Retry-After while PostgreSQL is unreachable, then recovers without a restart', async () => {
    expect((await listOrders()).status).toBe(200);

    await proxy.cut();
    const down = await listOrders();
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await down.json()).toEqual({ error: 'temporarily_unavailable' });

    const login = await fetch(`${api.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'outage@example.com', password: 'outage-password-1234' }),
      signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
    });
    expect(login.status).toBe(503);
    expect(login.headers.getSetCookie()).toEqual([]);

    const ready = await fetch(`${api.url}/readyz`, {
      signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
    });
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(await ready.json()).toEqual({ status: 'unavailable', database: 'unreachable' });
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);

    await proxy.restore();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await listOrders()).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
  }, 60_000);
});
