/**
 * PostgreSQL going away and coming back, through a TCP proxy this test owns (the real
 * server stays up for the tests running beside this one). While it is away the API
 * answers 503 + Retry-After well inside a client's 15 s timeout; when it returns the API
 * recovers by itself, without a restart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createAccountsRepo } from '@portcullis/accounts';
import { createDb, type Db } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { pino } from 'pino';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../src/index.js';
import { startTcpProxy, viaProxy, type TcpProxy } from '@portcullis/db/testing';

const AUDIENCE = 'http://api.portcullis.test';
/** Well under the reference client's 15 s timeout. */
const CLIENT_PATIENCE_MS = 10_000;
const withPostgres = process.env['DATABASE_URL'] ? describe : describe.skip;

withPostgres('PostgreSQL outage (runs only with DATABASE_URL)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Db;
  let dataDir: string;
  let api: RunningApiServer;
  let apiKey: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = createDb({ databaseUrl: viaProxy(database.url!, proxy) });
    dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-pg-outage-'));
    api = await startApiServer(
      parseApiConfig({
        NODE_ENV: 'test',
        API_PORT: '0',
        ISSUER: 'http://127.0.0.1:9',
        API_AUDIENCE: AUDIENCE,
        DATA_DIR: dataDir,
      }),
      { db, logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }) },
    );
    const email = 'outage@example.com';
    const password = 'outage-password-1234';
    await createAccountsRepo(database.db).create({ email, password, roles: ['admin'] });
    const login = await fetch(`${api.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const sid = /sid=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
    const created = await fetch(`${api.url}/api-keys`, {
      method: 'POST',
      headers: { cookie: `sid=${sid}`, 'content-type': 'application/json', origin: AUDIENCE },
      body: JSON.stringify({ name: 'outage', permissions: ['orders:read'] }),
    });
    apiKey = ((await created.json()) as { key: string }).key;
  });

  afterAll(async () => {
    await api?.close();
    await db?.destroy();
    await proxy?.close();
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
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
