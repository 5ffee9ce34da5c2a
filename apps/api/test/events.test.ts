import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { recordEvent } from '../src/data/events-repo.js';
import { makeUser, newOrderBody } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let alice: string;
let bob: string;
let admin: string;

interface Item {
  id: string;
  type: string;
  subjectType: string;
  subjectId: string;
  createdAt: string;
  data: Record<string, unknown>;
}

async function feed(
  token: string,
  query = '',
): Promise<{ items: Item[]; nextBefore: string | null }> {
  const res = await api.request('GET', `/events${query}`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

/** Every page, following nextBefore. */
async function walk(token: string, limit: number): Promise<Item[]> {
  const all: Item[] = [];
  let before: string | null = null;
  do {
    const page = await feed(
      token,
      `?limit=${limit}${before ? `&before=${encodeURIComponent(before)}` : ''}`,
    );
    expect(page.items.length).toBeLessThanOrEqual(limit);
    all.push(...page.items);
    before = page.nextBefore;
  } while (before);
  return all;
}

beforeAll(async () => {
  api = await startTestApi();
  alice = await api.token('user-alice', ['editor']);
  bob = await api.token('user-bob', ['editor']);
  admin = await api.token('user-admin', ['admin']);
});
afterAll(() => api.close());

describe('the outbox', () => {
  test('order created, updated, cancelled and deleted each write an event in the same transaction', async () => {
    const created = await api.request('POST', '/orders', { token: alice, body: newOrderBody() });
    const id = created.body.id as string;
    await api.request('PATCH', `/orders/${id}`, { token: alice, body: { note: 'hi' } });
    await api.request('POST', `/orders/${id}/cancel`, { token: alice });
    expect((await api.request('DELETE', `/orders/${id}`, { token: admin })).status).toBe(204);
    const mine = (await feed(alice)).items.filter((e) => e.subjectId === id);
    expect(mine.map((e) => e.type)).toEqual([
      'order.deleted',
      'order.cancelled',
      'order.updated',
      'order.created',
    ]);
    expect(mine[3]).toMatchObject({
      subjectType: 'order',
      data: { id, userId: api.userId('user-alice'), status: 'pending' },
    });
    expect(mine[1]!.data['status']).toBe('cancelled');
    expect(mine[0]!.data).toEqual({ id });
    // A write that fails (stale version) writes no event.
    const other = await api.request('POST', '/orders', { token: alice, body: newOrderBody() });
    const stale = await api.request('PATCH', `/orders/${other.body.id}`, {
      token: alice,
      body: { note: 'x', version: 9 },
    });
    expect(stale.status).toBe(409);
    expect((await feed(alice)).items.filter((e) => e.subjectId === other.body.id)).toHaveLength(1);
  });

  test('deleting a user writes user.deleted, visible to users:* holders only', async () => {
    const user = await makeUser(api.database.db);
    // Signed in before the deletion: a deleted user cannot sign in any more.
    const self = await api.tokenFor(user);
    expect((await api.request('DELETE', `/users/${user.id}`, { token: admin })).status).toBe(204);
    const adminFeed = await feed(admin, '?limit=100');
    expect(adminFeed.items.find((e) => e.subjectId === user.id)).toMatchObject({
      type: 'user.deleted',
      data: { id: user.id },
    });
    expect(
      (await feed(self, '?limit=100')).items.find((e) => e.type === 'user.deleted'),
    ).toBeUndefined();
  });
});

describe('GET /events', () => {
  test('visibility: owners see their own events; orders:* sees every order event', async () => {
    const a = await api.request('POST', '/orders', { token: alice, body: newOrderBody() });
    const b = await api.request('POST', '/orders', { token: bob, body: newOrderBody() });
    const aliceIds = (await walk(alice, 100)).map((e) => e.subjectId);
    const bobIds = (await walk(bob, 100)).map((e) => e.subjectId);
    expect(aliceIds).toContain(a.body.id);
    expect(aliceIds).not.toContain(b.body.id);
    expect(bobIds).toEqual([b.body.id]);
    const adminIds = (await walk(admin, 100)).map((e) => e.subjectId);
    expect(adminIds).toEqual(expect.arrayContaining([a.body.id, b.body.id]));
  });

  test('pages newest first; nextBefore keeps events with equal timestamps neither skipped nor repeated', async () => {
    const token = await api.token('user-ties', ['viewer']);
    const owner = api.userId('user-ties');
    const at = new Date('2030-01-01T00:00:00.000Z');
    await api.database.db.transaction(async (trx) => {
      for (let i = 0; i < 7; i++) {
        await recordEvent(trx, {
          type: 'order.updated',
          subjectType: 'order',
          subjectId: `o${i}`,
          ownerId: owner,
          data: { i },
          createdAt: at,
        });
      }
      await recordEvent(trx, {
        type: 'order.created',
        subjectType: 'order',
        subjectId: 'older',
        ownerId: owner,
        data: {},
        createdAt: new Date(at.getTime() - 1000),
      });
    });
    for (const limit of [1, 2, 3, 7, 8, 100]) {
      const items = await walk(token, limit);
      expect(items.map((e) => e.subjectId)).toEqual([
        'o6',
        'o5',
        'o4',
        'o3',
        'o2',
        'o1',
        'o0',
        'older',
      ]);
    }
    const first = await feed(token, '?limit=3');
    expect(first.nextBefore).toBe(`${first.items[2]!.createdAt}~${first.items[2]!.id}`);
    expect(first.items[0]!.createdAt).toBe('2030-01-01T00:00:00.000000Z');
    // A plain ISO timestamp: strictly older.
    expect(
      (await feed(token, '?before=2030-01-01T00:00:00Z')).items.map((e) => e.subjectId),
    ).toEqual(['older']);
    expect(
      (await feed(token, '?before=2030-01-01T01:00:00%2B01:00')).items.map((e) => e.subjectId),
    ).toEqual(['older']);
    expect((await feed(token, '?before=2029-12-31')).items).toEqual([]);
    expect((await feed(token, '?limit=100')).nextBefore).toBeNull();
  });

  test('an invalid before or limit -> 422 naming the field', async () => {
    for (const before of [
      'yesterday',
      '2030-02-30T00:00:00Z',
      '2030-01-01T25:00:00Z',
      '2030-01-01T00:00:00Z~x',
    ]) {
      const res = await api.request('GET', `/events?before=${encodeURIComponent(before)}`, {
        token: alice,
      });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.fields)).toEqual(['before']);
    }
    expect((await api.request('GET', '/events?limit=101', { token: alice })).status).toBe(422);
  });

  test('needs events:read', async () => {
    const narrow = await api.token('user-alice', ['editor'], { scope: 'orders:read' });
    const res = await api.request('GET', '/events', { token: narrow });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden' });
    expect((await api.request('GET', '/events')).status).toBe(401);
  });
});
