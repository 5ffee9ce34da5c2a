import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { toCount } from '@portcullis/db';
import { createIdempotencyRepo } from '../src/data/idempotency-repo.js';
import { FakePaymentProvider } from '../src/payments/fake-provider.js';
import type { ChargeRequest, ChargeResult, PaymentProvider } from '../src/payments/provider.js';
import { canonicalJson } from '../src/routes/payments.js';
import { newOrderBody } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

/** The fake provider, optionally held at a gate (to keep a request in flight). */
class GatedProvider implements PaymentProvider {
  readonly fake = new FakePaymentProvider();
  gate: Promise<void> | undefined;
  async charge(request: ChargeRequest): Promise<ChargeResult> {
    await this.gate;
    return this.fake.charge(request);
  }
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

let api: TestApi;
let provider: GatedProvider;
// Admin role narrowed by scope: payments:read/create and own orders only (not payments:*).
const SCOPE = 'payments:read payments:create orders:read orders:write events:read';
let alice: string;
let bob: string;
let admin: string;
let key = 0;
const newKey = () => `key-${Date.now()}-${++key}`;

async function orderOf(token: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await api.request('POST', '/orders', { token, body: newOrderBody(overrides) });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const pay = (token: string, body: unknown, idempotencyKey?: string) =>
  api.request('POST', '/payments', {
    token,
    body,
    headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
  });

async function paymentRows(where: Record<string, string> = {}): Promise<number> {
  const row = await api.database.db('payments').where(where).count({ count: '*' }).first();
  return toCount(row?.['count']);
}

beforeAll(async () => {
  provider = new GatedProvider();
  api = await startTestApi({ deps: { paymentProvider: provider } });
  alice = await api.token('user-alice', ['admin'], { scope: SCOPE });
  bob = await api.token('user-bob', ['admin'], { scope: SCOPE });
  admin = await api.token('user-admin', ['admin']);
});
afterAll(() => api.close());

describe('POST /payments: Idempotency-Key', () => {
  test('missing -> 400 idempotency_key_required; too long or not printable ASCII -> 400 idempotency_key_invalid', async () => {
    const orderId = await orderOf(alice);
    const body = { orderId, amount: 500, currency: 'EUR' };
    const missing = await pay(alice, body);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('idempotency_key_required');
    for (const bad of ['k'.repeat(256), 'caf\u00e9']) {
      const res = await pay(alice, body, bad);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('idempotency_key_invalid');
    }
    expect((await pay(alice, body, 'k'.repeat(255))).status).toBe(201);
  });

  test('same key and body replays status, headers and body with Idempotent-Replayed: true', async () => {
    const orderId = await orderOf(alice);
    const k = newKey();
    const charges = provider.fake.chargeCount;
    const first = await pay(alice, { orderId, amount: 1999, currency: 'EUR' }, k);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.headers.get('location')).toBe(`/payments/${first.body.id}`);
    expect(first.body).toMatchObject({
      orderId,
      amount: 1999,
      currency: 'EUR',
      status: 'succeeded',
      userId: api.userId('user-alice'),
    });
    // Same content, other key order: the canonical JSON hash matches.
    const again = await pay(alice, { currency: 'EUR', amount: 1999, orderId }, k);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.body).toEqual(first.body);
    expect(provider.fake.chargeCount).toBe(charges + 1);
    expect(await paymentRows({ order_id: orderId })).toBe(1);
  });

  test('same key, another body -> 422 idempotency_key_reused; keys are per caller', async () => {
    const orderId = await orderOf(alice);
    const k = newKey();
    expect((await pay(alice, { orderId, amount: 100, currency: 'EUR' }, k)).status).toBe(201);
    const reused = await pay(alice, { orderId, amount: 101, currency: 'EUR' }, k);
    expect(reused.status).toBe(422);
    expect(reused.body.error).toBe('idempotency_key_reused');
    // Bob's identical key is his own: it is not Alice's record (and her order is a 404 to him).
    const bobOrder = await orderOf(bob);
    const bobs = await pay(bob, { orderId: bobOrder, amount: 101, currency: 'EUR' }, k);
    expect(bobs.status).toBe(201);
    expect(bobs.headers.get('idempotent-replayed')).toBeNull();
  });

  test('validation failures (422) are not stored: the key still works afterwards', async () => {
    const orderId = await orderOf(alice);
    const k = newKey();
    const invalid = await pay(alice, { orderId, amount: -5, currency: 'eur' }, k);
    expect(invalid.status).toBe(422);
    expect(invalid.body.error).toBe('validation_failed');
    expect(Object.keys(invalid.body.fields).sort()).toEqual(['amount', 'currency']);
    const ok = await pay(alice, { orderId, amount: 700, currency: 'EUR' }, k);
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
  });

  test('50 concurrent requests with one key: one payment row, one charge, every answer the same payment', async () => {
    const orderId = await orderOf(alice);
    const k = newKey();
    const calls = provider.fake.calls;
    const charges = provider.fake.chargeCount;
    const body = { orderId, amount: 4200, currency: 'EUR' };
    const replies = await Promise.all(Array.from({ length: 50 }, () => pay(alice, body, k)));
    const statuses = new Set(replies.map((r) => r.status));
    expect([...statuses].every((s) => s === 201 || s === 409)).toBe(true);
    const created = replies.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(created.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    for (const r of replies.filter((x) => x.status === 409))
      expect(r.body.error).toBe('idempotency_key_in_flight');
    expect(await paymentRows({ order_id: orderId })).toBe(1);
    expect(provider.fake.chargeCount).toBe(charges + 1);
    expect(provider.fake.calls).toBe(calls + 1);
    // Afterwards every retry replays.
    const later = await pay(alice, body, k);
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(later.body.id).toBe(created[0]!.body.id);
  });

  test('a request still in flight -> 409 idempotency_key_in_flight; once done, retries replay', async () => {
    const orderId = await orderOf(alice);
    const k = newKey();
    const body = { orderId, amount: 900, currency: 'EUR' };
    const held = deferred();
    provider.gate = held.promise;
    try {
      const first = pay(alice, body, k);
      // Wait until the first request holds the key (its row exists).
      for (
        let i = 0;
        i < 100 && !(await api.database.db('idempotency_keys').where({ key: k }).first());
        i++
      ) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const second = await pay(alice, body, k);
      expect(second.status).toBe(409);
      expect(second.body.error).toBe('idempotency_key_in_flight');
      expect(second.headers.get('retry-after')).toBe('1');
      held.resolve();
      expect((await first).status).toBe(201);
    } finally {
      provider.gate = undefined;
      held.resolve();
    }
    const third = await pay(alice, body, k);
    expect(third.status).toBe(201);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
  });

  test('a stale in-flight key (the process died after charging) is retried without a second charge', async () => {
    const orderId = await orderOf(alice);
    const k = newKey();
    const body = { orderId, amount: 1234, currency: 'EUR' };
    // What a crashed request left: a claim two minutes old, and a charge at the provider.
    const outcome = await createIdempotencyRepo(api.database.db).claim({
      subject: api.userId('user-alice'),
      key: k,
      requestHash: createHash('sha256').update(canonicalJson(body)).digest('hex'),
      now: new Date(Date.now() - 120_000),
      ttlMs: 24 * 3600_000,
      staleMs: 60_000,
    });
    if (outcome.outcome !== 'claimed') throw new Error('expected a claim');
    const request = {
      idempotencyKey: `portcullis_${outcome.claim.id}`,
      amount: 1234,
      currency: 'EUR',
      reference: orderId,
    };
    const charged = await provider.fake.charge(request);
    const charges = provider.fake.chargeCount;
    const retry = await pay(alice, body, k);
    expect(retry.status).toBe(201);
    expect(retry.body.providerRef).toBe(charged.providerRef);
    expect(provider.fake.chargeCount).toBe(charges);
    expect(await paymentRows({ order_id: orderId })).toBe(1);
  });

  test('the order must be visible (404) and not cancelled (409); neither is stored', async () => {
    const bobsOrder = await orderOf(bob);
    const k = newKey();
    const hidden = await pay(alice, { orderId: bobsOrder, amount: 100, currency: 'EUR' }, k);
    expect(hidden.status).toBe(404);
    const cancelled = await orderOf(alice);
    expect(
      (await api.request('POST', `/orders/${cancelled}/cancel`, { token: alice })).status,
    ).toBe(200);
    const closed = await pay(alice, { orderId: cancelled, amount: 100, currency: 'EUR' }, k);
    expect(closed.status).toBe(409);
    expect(closed.body.error).toBe('order_closed');
    // The key was released each time, so another body under it is a fresh request.
    const mine = await orderOf(alice);
    expect((await pay(alice, { orderId: mine, amount: 100, currency: 'EUR' }, k)).status).toBe(201);
  });

  test('an amount ending in 13 is declined by the fake provider: 201 with status failed, and a payment.failed event', async () => {
    const orderId = await orderOf(alice);
    const res = await pay(alice, { orderId, amount: 2013, currency: 'EUR' }, newKey());
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('failed');
    const event = await api.database.db('events').where({ subject_id: res.body.id }).first();
    expect(event).toMatchObject({
      type: 'payment.failed',
      owner_id: api.userId('user-alice'),
      subject_type: 'payment',
    });
  });
});

describe('GET /payments', () => {
  test('cursor pages newest first; non-admins see only their own; admins see all', async () => {
    const carol = await api.token('user-carol', ['admin'], { scope: SCOPE });
    const orderId = await orderOf(carol);
    const ids: string[] = [];
    for (const amount of [10, 20, 30]) {
      ids.push((await pay(carol, { orderId, amount, currency: 'EUR' }, newKey())).body.id);
    }
    const page1 = await api.request('GET', '/payments?limit=2', { token: carol });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    expect(typeof page1.body.nextCursor).toBe('string');
    const page2 = await api.request('GET', `/payments?limit=2&after=${page1.body.nextCursor}`, {
      token: carol,
    });
    expect(page2.body.items.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect(page2.body.nextCursor).toBeNull();
    const tampered = await api.request('GET', `/payments?after=${page1.body.nextCursor}x`, {
      token: carol,
    });
    expect(tampered.status).toBe(400);

    const bobs = await api.request('GET', '/payments?limit=100', { token: bob });
    expect(
      bobs.body.items.every((p: { userId: string }) => p.userId === api.userId('user-bob')),
    ).toBe(true);
    expect((await api.request('GET', `/payments/${ids[0]}`, { token: bob })).status).toBe(404);
    const own = await api.request('GET', `/payments/${ids[0]}`, { token: carol });
    expect(own.status).toBe(200);
    expect(own.headers.get('etag')).toMatch(/^"/);
    expect((await api.request('GET', `/payments/${ids[0]}`, { token: admin })).status).toBe(200);
    const all = await api.request('GET', '/payments?limit=100', { token: admin });
    expect(new Set(all.body.items.map((p: { userId: string }) => p.userId)).size).toBeGreaterThan(
      1,
    );
  });

  test('payments:create does not imply payments:read (editor): 403', async () => {
    const editor = await api.token('user-editor', ['editor']);
    const res = await api.request('GET', '/payments', { token: editor });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden' });
  });
});
