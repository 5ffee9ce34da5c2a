/**
 * PostgreSQL that stops answering without closing anything (its processes stopped, or a
 * network partition), played by a TCP proxy this test owns that holds every byte until
 * it thaws. Every database round trip is bounded (DB_QUERY_TIMEOUT, default 5 s): a
 * request answers 503 + Retry-After well inside a client's 15 s timeout, and what the
 * server gave up on is rolled back, never committed when the database wakes up.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createAccountsRepo } from '@portcullis/accounts';
import { createDb, isDatabaseUnavailable, type Db } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { pino } from 'pino';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../src/index.js';
import { startTcpProxy, viaProxy, type TcpProxy } from '@portcullis/db/testing';

const AUDIENCE = 'http://api.portcullis.test';
/** Well under the reference client's 15 s timeout. */
const CLIENT_PATIENCE_MS = 10_000;
const withPostgres = process.env['DATABASE_URL'] ? describe : describe.skip;
if (!process.env['DATABASE_URL']) {
  console.info('database-freeze.test.ts skipped: it needs a PostgreSQL server (DATABASE_URL)');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

withPostgres('PostgreSQL that stops answering (runs only with DATABASE_URL)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Db;
  let dataDir: string;
  let api: RunningApiServer;
  let apiKey: string;
  let ownerId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = createDb({ databaseUrl: viaProxy(database.url!, proxy) });
    dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-pg-freeze-'));
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
    const email = 'freeze@example.com';
    const password = 'freeze-password-1234';
    ownerId = (await createAccountsRepo(database.db).create({ email, password, roles: ['admin'] }))
      .id;
    const login = await fetch(`${api.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const sid = /sid=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
    const created = await fetch(`${api.url}/api-keys`, {
      method: 'POST',
      headers: { cookie: `sid=${sid}`, 'content-type': 'application/json', origin: AUDIENCE },
      body: JSON.stringify({ name: 'freeze', permissions: ['orders:read', 'orders:write'] }),
    });
    apiKey = ((await created.json()) as { key: string }).key;
  });

  afterAll(async () => {
    proxy?.thaw();
    await api?.close();
    await db?.destroy();
    await proxy?.close();
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Sessions PostgreSQL still holds open inside a transaction, on this test's database. */
  async function openTransactions(): Promise<number> {
    const { rows } = (await database.db.raw(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`,
    )) as { rows: { n: number }[] };
    return rows[0]!.n;
  }

  /** Waits until the woken server has read the closes that were held, then aborted. */
  async function settledAfterThaw(): Promise<void> {
    for (let i = 0; i < 50 && (await openTransactions()) > 0; i++) await sleep(100);
    expect(await openTransactions()).toBe(0);
  }

  const ordersOf = async (customerPrefix: string) =>
    (await database.db('orders').where('customer', 'like', `${customerPrefix}%`)).length;

  it('rolls back a transaction whose server froze mid-way, instead of committing it when the server wakes', async () => {
    const customer = `trx-${randomUUID()}`;
    const started = Date.now();
    const work = db.transaction(async (trx) => {
      await trx('orders').insert({
        id: randomUUID(),
        user_id: ownerId,
        customer,
        status: 'pending',
        amount: 1,
        currency: 'EUR',
        version: 1,
      });
      // The INSERT reached the server; now it stops answering.
      proxy.freeze();
      await trx('orders').where({ customer }).first();
    });
    const outcome = await Promise.race([
      work.then(
        () => 'committed',
        (error: unknown) => error,
      ),
      sleep(CLIENT_PATIENCE_MS).then(() => 'still waiting'),
    ]);
    expect(isDatabaseUnavailable(outcome)).toBe(true);
    expect(Date.now() - started).toBeLessThan(CLIENT_PATIENCE_MS);

    proxy.thaw();
    await work.catch(() => undefined);
    await settledAfterThaw();
    expect(await ordersOf(customer)).toBe(0);
  }, 30_000);

  it('answers 503 with Retry-After within a few seconds under load, commits nothing later, and recovers', async () => {
    const auth = { authorization: `Bearer ${apiKey}` };
    const listOrders = () =>
      fetch(`${api.url}/orders`, {
        headers: auth,
        signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
      });
    const prefix = `frozen-${randomUUID()}-`;
    const createOrder = (n: number) =>
      fetch(`${api.url}/orders`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ customer: `${prefix}${n}`, amount: 100, currency: 'EUR' }),
        signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
      });
    // Warm the pool, so that requests below hold connections when the server freezes.
    for (const res of await Promise.all([listOrders(), listOrders(), createOrder(0)])) {
      expect(res.status).toBeLessThan(300);
    }
    expect(await ordersOf(prefix)).toBe(1);

    proxy.freeze();
    // More requests than the pool has connections: some hold one, the rest wait for one.
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => createOrder(i + 1)),
      ...Array.from({ length: 6 }, () => listOrders()),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(await res.json()).toEqual({ error: 'temporarily_unavailable' });
    }
    const ready = await fetch(`${api.url}/readyz`, {
      signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
    });
    expect(ready.status).toBe(503);
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);

    proxy.thaw();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await listOrders()).status;
      if (status !== 200) await sleep(200);
    }
    expect(status).toBe(200);
    await settledAfterThaw();
    // Only the order created before the freeze: every 503 was rolled back.
    expect(await ordersOf(prefix)).toBe(1);
  }, 60_000);
});
