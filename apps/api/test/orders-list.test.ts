import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { makeOrder } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let owner: string;
const ids = (res: { body: { items: { customer: string }[] } }) =>
  res.body.items.map((o) => o.customer);

beforeAll(async () => {
  api = await startTestApi();
  owner = await api.token('lister', ['editor']);
  const lister = api.userId('lister');
  const other = (await api.user('someone-else', ['editor'])).id;
  const db = api.database.db;
  const day = (d: string) => new Date(`${d}T12:00:00Z`);
  await makeOrder(db, lister, {
    customer: 'c1',
    status: 'pending',
    createdAt: day('2024-01-01'),
  });
  await makeOrder(db, lister, { customer: 'c2', status: 'open', createdAt: day('2024-02-01') });
  await makeOrder(db, lister, {
    customer: 'c3',
    status: 'fulfilled',
    createdAt: day('2024-03-01'),
  });
  await makeOrder(db, lister, {
    customer: 'c4',
    status: 'cancelled',
    createdAt: day('2024-04-01'),
  });
  await makeOrder(db, lister, { customer: 'c5', status: 'open', createdAt: day('2024-05-01') });
  await makeOrder(db, other, {
    customer: 'c5',
    status: 'open',
    createdAt: day('2024-05-02'),
  });
});
afterAll(() => api.close());

describe('GET /orders filters', () => {
  test('no filter: newest first, offset envelope with defaults', async () => {
    const res = await api.request('GET', '/orders', { token: owner });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(ids(res)).toEqual(['c5', 'c4', 'c3', 'c2', 'c1']);
    expect(res.body).toMatchObject({ total: 5, page: 1, limit: 20 });
  });

  test('status repeated and comma-separated give the same result', async () => {
    const repeated = await api.request('GET', '/orders?status=open&status=pending', {
      token: owner,
    });
    const comma = await api.request('GET', '/orders?status=open,pending', { token: owner });
    expect(ids(repeated)).toEqual(['c5', 'c2', 'c1']);
    expect(comma.body).toEqual(repeated.body);
    expect(repeated.body.total).toBe(3);
  });

  test('customer and createdAfter (inclusive from 00:00 UTC) combine', async () => {
    expect(ids(await api.request('GET', '/orders?customer=c3', { token: owner }))).toEqual(['c3']);
    expect(
      ids(await api.request('GET', '/orders?createdAfter=2024-03-01', { token: owner })),
    ).toEqual(['c5', 'c4', 'c3']);
    const both = await api.request('GET', '/orders?createdAfter=2024-02-01&status=open', {
      token: owner,
    });
    expect(ids(both)).toEqual(['c5', 'c2']);
  });

  test('invalid filter values -> 422 naming the parameter', async () => {
    for (const [query, field] of [
      ['status=shipped', 'status.0'],
      ['createdAfter=2024-13-01', 'createdAfter'],
      ['createdAfter=2024-02-30', 'createdAfter'],
      ['createdAfter=yesterday', 'createdAfter'],
    ] as const) {
      const res = await api.request('GET', `/orders?${query}`, { token: owner });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.fields)).toEqual([field]);
    }
  });
});

describe('GET /orders pagination and query validation', () => {
  test('pages partition the result; a page beyond the end is empty but keeps total', async () => {
    const p1 = await api.request('GET', '/orders?limit=2&page=1', { token: owner });
    const p3 = await api.request('GET', '/orders?limit=2&page=3', { token: owner });
    const p4 = await api.request('GET', '/orders?limit=2&page=4', { token: owner });
    expect(ids(p1)).toEqual(['c5', 'c4']);
    expect(ids(p3)).toEqual(['c1']);
    expect(p4.body).toEqual({ items: [], total: 5, page: 4, limit: 2 });
  });

  test.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['limit=10&limit=20', 'limit'],
    ['page=1&page=2', 'page'],
    ['customer=a&customer=b', 'customer'],
    ['q=%7B%22status%22%3A%22open%22%7D', 'q'],
    ['sort=amount', 'sort'],
  ])('%s -> 422 naming %s', async (query, field) => {
    const res = await api.request('GET', `/orders?${query}`, { token: owner });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(Object.keys(res.body.fields)).toEqual([field]);
  });

  test('limit 100 is the maximum accepted', async () => {
    const res = await api.request('GET', '/orders?limit=100', { token: owner });
    expect(res.status).toBe(200);
    expect(res.body.limit).toBe(100);
  });
});
