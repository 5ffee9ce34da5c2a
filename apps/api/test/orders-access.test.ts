import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createOrdersRepo } from '../src/data/orders-repo.js';
import { newOrderBody } from './helpers/factories.js';
import { claimsOf, startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let alice: string; // editor
let bob: string; // editor
let viewer: string;
let admin: string;
let bobsOrder: { id: string; version: number };

beforeAll(async () => {
  api = await startTestApi();
  alice = await api.token('user-alice', ['editor']);
  bob = await api.token('user-bob', ['editor']);
  viewer = await api.token('user-viewer', ['viewer']);
  admin = await api.token('user-admin', ['admin']);
  bobsOrder = (
    await api.request('POST', '/orders', {
      token: bob,
      body: newOrderBody({ customer: 'Bob Ltd' }),
    })
  ).body;
});
afterAll(() => api.close());

describe('BOLA: another user’s order is indistinguishable from a missing one', () => {
  const missing = '00000000-0000-4000-8000-000000000000';

  test.each([
    ['GET', ''],
    ['PUT', ''],
    ['PATCH', ''],
    ['POST', '/cancel'],
    ['POST', '/confirm'],
  ])(
    '%s /orders/:id%s by a non-owner editor -> the same 404 as a missing id',
    async (method, suffix) => {
      const body =
        method === 'PUT' ? newOrderBody() : method === 'PATCH' ? { note: 'mine now' } : undefined;
      const theirs = await api.request(method, `/orders/${bobsOrder.id}${suffix}`, {
        token: alice,
        body,
      });
      const none = await api.request(method, `/orders/${missing}${suffix}`, { token: alice, body });
      expect(theirs.status).toBe(404);
      expect(theirs.body).toEqual(none.body);
      expect([...theirs.headers.keys()].sort()).toEqual([...none.headers.keys()].sort());
    },
  );

  test('If-Match with a guessed ETag does not reveal existence either', async () => {
    const res = await api.request('PATCH', `/orders/${bobsOrder.id}`, {
      token: alice,
      body: { note: 'x' },
      headers: { 'if-match': '"nope"' },
    });
    expect(res.status).toBe(404);
  });

  test('lists show only the caller’s own orders, filtered in SQL (total counts only those)', async () => {
    await api.request('POST', '/orders', {
      token: alice,
      body: newOrderBody({ customer: 'Alice GmbH' }),
    });
    const mine = await api.request('GET', '/orders', { token: alice });
    expect(mine.body.total).toBe(1);
    expect(mine.body.items.map((o: { userId: string }) => o.userId)).toEqual([
      api.userId('user-alice'),
    ]);
    const byCustomer = await api.request('GET', '/orders?customer=Bob%20Ltd', { token: alice });
    expect(byCustomer.body).toEqual({ items: [], total: 0, page: 1, limit: 20 });
  });

  test('Bob’s order is unchanged after Alice’s attempts', async () => {
    const res = await api.request('GET', `/orders/${bobsOrder.id}`, { token: bob });
    expect(res.body).toMatchObject({ version: 1, status: 'pending', customer: 'Bob Ltd' });
  });
});

describe('roles: viewer, editor, admin', () => {
  test('a viewer may read but not write: 403 exactly {"error":"forbidden"}', async () => {
    expect((await api.request('GET', '/orders', { token: viewer })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/orders', newOrderBody()],
      ['PATCH', `/orders/${bobsOrder.id}`, { note: 'x' }],
      ['POST', `/orders/${bobsOrder.id}/cancel`, undefined],
      ['DELETE', `/orders/${bobsOrder.id}`, undefined],
    ] as const) {
      const res = await api.request(method, path, { token: viewer, body });
      expect(res.status).toBe(403);
      expect(res.text).toBe('{"error":"forbidden"}');
    }
  });

  test('an editor may not delete, not even their own order', async () => {
    const res = await api.request('DELETE', `/orders/${bobsOrder.id}`, { token: bob });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden' });
  });

  test('an admin sees and changes every order', async () => {
    const list = await api.request('GET', '/orders', { token: admin });
    expect(list.body.total).toBeGreaterThanOrEqual(2);
    const patch = await api.request('PATCH', `/orders/${bobsOrder.id}`, {
      token: admin,
      body: { note: 'checked by admin' },
    });
    expect(patch.status).toBe(200);
    expect(patch.body.userId).toBe(api.userId('user-bob'));
  });

  test('a token without an order scope has no order permissions whatever its role', async () => {
    // An API token (scope users:read) of an admin: no order scope, so no order permission.
    const narrow = await api.token('user-narrow-admin', ['admin'], { scope: 'users:read' });
    expect((await api.request('GET', '/orders', { token: narrow })).status).toBe(403);
    expect((await api.request('GET', '/users', { token: narrow })).status).toBe(200);
    const readOnly = await api.token('user-alice', ['editor'], { scope: 'orders:read' });
    expect((await api.request('GET', '/orders', { token: readOnly })).status).toBe(200);
    expect(
      (await api.request('POST', '/orders', { token: readOnly, body: newOrderBody() })).status,
    ).toBe(403);
  });

  test('a client-credentials token owns nothing: it needs orders:* to create orders', async () => {
    const client = await api.clientToken(['editor']);
    expect((await api.request('GET', '/orders', { token: client })).body.total).toBe(0);
    const res = await api.request('POST', '/orders', { token: client, body: newOrderBody() });
    expect(res.status).toBe(403);
    const adminClient = await api.clientToken(['admin']);
    const subject = claimsOf(adminClient)['sub'];
    expect(subject).toMatch(/^client:/);
    const created = await api.request('POST', '/orders', {
      token: adminClient,
      body: newOrderBody(),
    });
    expect(created.status).toBe(201);
    expect(created.body.userId).toBe(subject);
    const patched = await api.request('PATCH', `/orders/${created.body.id}`, {
      token: adminClient,
      body: { note: 'ok' },
    });
    expect(patched.status).toBe(200);
  });

  test('an unknown role grants nothing', async () => {
    const odd = await api.token('user-x', ['superuser']);
    expect((await api.request('GET', '/orders', { token: odd })).body).toEqual({
      error: 'forbidden',
    });
  });
});

describe('reads made at the same time share one query, each under its own caller’s rule', () => {
  test('concurrent GETs by the owner, another user and an admin each get their own answer', async () => {
    const path = `/orders/${bobsOrder.id}`;
    const replies = await Promise.all(
      [bob, alice, admin, alice, bob, viewer].map((token) => api.request('GET', path, { token })),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 404, 200, 404, 200, 404]);
    expect(replies[2]!.body).toMatchObject({ id: bobsOrder.id, customer: 'Bob Ltd' });
  });

  test('finds called in one turn of the event loop are one SQL statement, owner-checked per key', async () => {
    const orders = createOrdersRepo(api.database.db);
    const alicesOrder = await orders.create(
      'owner-alice',
      { customer: 'Alice GmbH', amount: 1, currency: 'EUR' },
      new Date(),
    );
    const statements: string[] = [];
    // Only reads of orders: the deny list's poll shares this database and may run meanwhile.
    const onQuery = (query: { sql: string }) => {
      if (/\borders\b/.test(query.sql)) statements.push(query.sql);
    };
    api.database.db.on('query', onQuery);
    try {
      const found = await Promise.all([
        orders.find(alicesOrder.id, { ownerId: 'owner-alice' }),
        orders.find(alicesOrder.id, { ownerId: 'owner-bob' }),
        orders.find(alicesOrder.id, {}),
        orders.find('00000000-0000-4000-8000-000000000000', {}),
        orders.find(alicesOrder.id, { ownerId: 'owner-alice' }),
      ]);
      expect(found.map((order) => order?.id)).toEqual([
        alicesOrder.id,
        undefined,
        alicesOrder.id,
        undefined,
        alicesOrder.id,
      ]);
      expect(found[0]).toEqual(alicesOrder);
    } finally {
      api.database.db.off('query', onQuery);
    }
    expect(statements).toHaveLength(1);
  });

  test('a key PostgreSQL cannot take (a NUL byte) finds nothing and fails no other read', async () => {
    const orders = createOrdersRepo(api.database.db);
    const found = await Promise.all([
      orders.find(bobsOrder.id, {}),
      orders.find(`${bobsOrder.id}\u0000`, {}),
      orders.find('\u0000', { ownerId: 'owner-bob' }),
      orders.find(bobsOrder.id, {}),
    ]);
    expect(found.map((order) => order?.id)).toEqual([
      bobsOrder.id,
      undefined,
      undefined,
      bobsOrder.id,
    ]);
  });
});

describe('GET /orders/:id may answer from a read cache of 1 s per instance; writes never do', () => {
  const content = { customer: 'Carol AG', amount: 5, currency: 'EUR' };
  /** What a write through another API instance looks like from here. */
  const writeElsewhere = (id: string, customer: string) =>
    api.database
      .db('orders')
      .where({ id })
      .update({ customer, version: api.database.db.raw('version + 1') });
  /** Statements on `orders` while `run` runs (the server's own polls share the pool). */
  const countStatements = async (run: () => Promise<unknown>): Promise<number> => {
    let n = 0;
    const onQuery = (query: { sql: string }) => {
      if (/\borders\b/.test(query.sql)) n++;
    };
    api.database.db.on('query', onQuery);
    try {
      await run();
    } finally {
      api.database.db.off('query', onQuery);
    }
    return n;
  };

  test('findRecent answers from memory until cacheMs has passed; find always reads', async () => {
    let clock = 0;
    const orders = createOrdersRepo(api.database.db, { cacheMs: 1000, now: () => clock });
    const order = await orders.create('owner-carol', content, new Date());
    const carol = { ownerId: 'owner-carol' };
    expect(await orders.findRecent(order.id, carol)).toEqual(order);
    await writeElsewhere(order.id, 'Changed elsewhere');

    clock = 999;
    expect(await countStatements(() => orders.findRecent(order.id, carol))).toBe(0);
    expect(await orders.findRecent(order.id, carol)).toMatchObject({ customer: 'Carol AG' });
    expect(await orders.find(order.id, carol)).toMatchObject({
      customer: 'Changed elsewhere',
      version: 2,
    });

    clock = 1000;
    expect(await orders.findRecent(order.id, carol)).toMatchObject({
      customer: 'Changed elsewhere',
      version: 2,
    });
  });

  test('each cached answer keeps its caller’s owner rule; absent orders are not remembered', async () => {
    const orders = createOrdersRepo(api.database.db, { cacheMs: 60_000 });
    const order = await orders.create('owner-carol', content, new Date());
    expect(await orders.findRecent(order.id, { ownerId: 'owner-carol' })).toEqual(order);
    // The owner's cached row answers nobody else: each owner condition is its own query.
    expect(await orders.findRecent(order.id, { ownerId: 'owner-dave' })).toBeUndefined();
    expect(await orders.findRecent(order.id, { ownerId: 'owner-dave' })).toBeUndefined();
    expect(await orders.findRecent(order.id, {})).toEqual(order);

    const later = '00000000-0000-4000-8000-00000000cafe';
    expect(await orders.findRecent(later, {})).toBeUndefined();
    await api.database.db('orders').insert({
      id: later,
      user_id: 'owner-carol',
      status: 'pending',
      customer: 'Made elsewhere',
      amount: 1,
      currency: 'EUR',
    });
    expect(await orders.findRecent(later, {})).toMatchObject({ customer: 'Made elsewhere' });
  });

  test('a write through the repo drops the entry, also for a read that overlapped it', async () => {
    const orders = createOrdersRepo(api.database.db, { cacheMs: 60_000 });
    const order = await orders.create('owner-carol', content, new Date());
    await orders.findRecent(order.id, {});
    const overlapping = orders.findRecent(order.id, {}); // served from the cache
    const [, updated] = await Promise.all([
      overlapping,
      orders.update(order.id, 1, { customer: 'Updated here' }, new Date()),
    ]);
    expect(updated).toMatchObject({ customer: 'Updated here', version: 2 });
    expect(await orders.findRecent(order.id, {})).toEqual(updated);

    const reading = orders.findRecent(order.id, {}); // cached again, then the row goes
    expect(await orders.delete(order.id, 2)).toBe(true);
    await reading;
    expect(await orders.findRecent(order.id, {})).toBeUndefined();
  });

  test('at most maxCached orders are remembered, the oldest read dropped first', async () => {
    const orders = createOrdersRepo(api.database.db, { cacheMs: 60_000, maxCached: 2 });
    const [a, b, c] = await Promise.all(
      [1, 2, 3].map(() => orders.create('owner-carol', content, new Date())),
    );
    for (const o of [a!, b!, c!]) await orders.findRecent(o.id, {});
    expect(await countStatements(() => orders.findRecent(c!.id, {}))).toBe(0);
    expect(await countStatements(() => orders.findRecent(a!.id, {}))).toBe(1);
  });

  test('over HTTP: this instance’s writes show at once, another instance’s after the bound, and a write reads the stored row', async () => {
    const created = await api.request('POST', '/orders', {
      token: bob,
      body: newOrderBody({ customer: 'Cached Co' }),
    });
    const path = `/orders/${created.body.id}`;
    expect((await api.request('GET', path, { token: bob })).body.customer).toBe('Cached Co');

    const patched = await api.request('PATCH', path, { token: bob, body: { note: 'at once' } });
    expect(patched.status).toBe(200);
    const afterPatch = await api.request('GET', path, { token: bob });
    expect(afterPatch.body).toMatchObject({ note: 'at once', version: 2 });
    expect(afterPatch.headers.get('etag')).toBe(patched.headers.get('etag'));

    await writeElsewhere(created.body.id, 'Changed elsewhere');
    // A write checks the stored version, whatever a cached read saw: version 3 is current.
    const write = await api.request('PATCH', path, {
      token: bob,
      body: { note: 'checked against the row', version: 3 },
    });
    expect(write.status).toBe(200);
    expect(write.body).toMatchObject({ customer: 'Changed elsewhere', version: 4 });

    await writeElsewhere(created.body.id, 'Changed again elsewhere');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await api.request('GET', path, { token: bob })).body).toMatchObject({
      customer: 'Changed again elsewhere',
      version: 5,
    });

    const deleted = await api.request('DELETE', path, { token: admin });
    expect(deleted.status).toBe(204);
    expect((await api.request('GET', path, { token: bob })).status).toBe(404);
  });
});
