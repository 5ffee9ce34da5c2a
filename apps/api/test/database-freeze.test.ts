/**
 * PostgreSQL that stops answering without closing anything (its processes stopped, or a
 * network partition), played by a TCP proxy this test owns that holds every byte until
 * it thaws. Every database round trip is bounded (DB_QUERY_TIMEOUT, default 5 s): a
 * request answers 503 + Retry-After well inside a client's 15 s timeout, and what the
 * server gave up on is rolled back, never committed when the database wakes up.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isDatabaseUnavailable, type Db } from '@portcullis/db';
import type { ProxiedTestDatabase, TcpProxy } from '@portcullis/db/testing';
import type { RunningApiServer } from '../src/index.js';
import { FakePaymentProvider } from '../src/payments/fake-provider.js';
import { startProxiedApi, type ProxiedApi } from './helpers/proxied-api.js';

/** Well under the reference client's 15 s timeout. */
const CLIENT_PATIENCE_MS = 10_000;
const withPostgres = process.env['DATABASE_URL'] ? describe : describe.skip;
if (!process.env['DATABASE_URL']) {
  console.info('database-freeze.test.ts skipped: it needs a PostgreSQL server (DATABASE_URL)');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

withPostgres('PostgreSQL that stops answering (runs only with DATABASE_URL)', () => {
  let proxied: ProxiedApi;
  let database: ProxiedTestDatabase;
  let proxy: TcpProxy;
  let db: Db;
  let api: RunningApiServer;
  let apiKey: string;
  let ownerId: string;
  const provider = new FakePaymentProvider();

  beforeAll(async () => {
    proxied = await startProxiedApi(
      ['orders:read', 'orders:write', 'payments:read', 'payments:create'],
      { paymentProvider: provider },
    );
    ({ database, proxy, db, api, apiKey, ownerId } = proxied);
  });

  afterAll(async () => {
    await proxied?.close();
  });

  /** Waits until the woken server has read the closes that were held, then aborted. */
  async function settledAfterThaw(): Promise<void> {
    for (let i = 0; i < 50 && (await database.openTransactions()) > 0; i++) await sleep(100);
    expect(await database.openTransactions()).toBe(0);
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

  it('an order answered 503 because its COMMIT was held in the network is not committed when the network thaws', async () => {
    const customer = `held-commit-${randomUUID()}`;
    // The INSERTs reach the server; the COMMIT after them does not, until the thaw.
    proxy.freezeOnRequest('COMMIT');
    const res = await fetch(`${api.url}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customer, amount: 100, currency: 'EUR' }),
      signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'temporarily_unavailable' });

    proxy.thaw();
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

  // The claim of the key is committed, or its INSERT held in the network; then the
  // request answers 503. Its retry with the same key soon after the thaw is made, once.
  it.each([
    ["the INSERT of its key's claim", 'insert into "idempotency_keys"'],
    ['the INSERT of its payment (after the charge)', 'insert into "payments"'],
  ])(
    'a payment answered 503 because %s was held in the network is made once by a retry with its key soon after the thaw',
    async (_, heldStatement) => {
      const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      const created = await fetch(`${api.url}/orders`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ customer: `pay-${randomUUID()}`, amount: 700, currency: 'EUR' }),
      });
      expect(created.status).toBe(201);
      const { id: orderId } = (await created.json()) as { id: string };
      const charges = provider.chargeCount;
      const pay = () =>
        fetch(`${api.url}/payments`, {
          method: 'POST',
          headers: { ...auth, 'idempotency-key': `freeze-${orderId}` },
          body: JSON.stringify({ orderId, amount: 700, currency: 'EUR' }),
          signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
        });

      proxy.freezeOnRequest(heldStatement);
      const failed = await pay();
      expect(failed.status).toBe(503);
      proxy.thaw();
      await settledAfterThaw();

      // Far fewer tries than the 60 s an in-flight claim of a live request is held.
      let retried = await pay();
      for (let i = 0; i < 10 && retried.status === 409; i++) {
        await sleep(Number(retried.headers.get('retry-after')) * 1000);
        retried = await pay();
      }
      expect(retried.status).toBe(201);
      expect((await pay()).headers.get('idempotent-replayed')).toBe('true');
      expect(await database.db('payments').where({ order_id: orderId })).toHaveLength(1);
      expect(provider.chargeCount).toBe(charges + 1);
    },
    60_000,
  );
});
