import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newOrderBody } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let editor: string;
let admin: string;

beforeAll(async () => {
  api = await startTestApi();
  editor = await api.token('user-editor', ['editor']);
  admin = await api.token('user-admin', ['admin']);
});
afterAll(() => api.close());

describe('orders: create, read, replace, update, delete', () => {
  test('POST /orders -> 201 with Location, owner = token subject, status pending', async () => {
    const res = await api.request('POST', '/orders', {
      token: editor,
      body: newOrderBody({ items: [{ sku: 'A-1', quantity: 2 }] }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/orders/${res.body.id}`);
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.body).toMatchObject({
      userId: api.userId('user-editor'),
      customer: 'ACME Corp',
      status: 'pending',
      amount: 1999,
      currency: 'EUR',
      items: [{ sku: 'A-1', quantity: 2 }],
      version: 1,
    });
    const got = await api.request('GET', res.headers.get('location')!, { token: editor });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  test('GET of a missing or malformed id -> 404', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await api.request('GET', `/orders/${id}`, { token: editor });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found' });
    }
  });

  test('PUT replaces the content and bumps the version; PATCH changes only the given fields', async () => {
    const created = await api.request('POST', '/orders', {
      token: editor,
      body: newOrderBody({ note: 'ring twice' }),
    });
    const id = created.body.id;
    const put = await api.request('PUT', `/orders/${id}`, {
      token: editor,
      body: { customer: 'Initech', amount: 500, currency: 'USD' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      customer: 'Initech',
      amount: 500,
      currency: 'USD',
      version: 2,
      status: 'pending',
    });
    expect(put.body.note).toBeUndefined();
    const patch = await api.request('PATCH', `/orders/${id}`, {
      token: editor,
      body: { note: 'leave at door' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ customer: 'Initech', note: 'leave at door', version: 3 });
    const cleared = await api.request('PATCH', `/orders/${id}`, {
      token: editor,
      body: { note: null },
    });
    expect(cleared.body.note).toBeUndefined();
  });

  test('an empty PATCH writes nothing', async () => {
    const created = await api.request('POST', '/orders', { token: editor, body: newOrderBody() });
    const res = await api.request('PATCH', `/orders/${created.body.id}`, {
      token: editor,
      body: {},
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
    expect(res.headers.get('etag')).toBe(created.headers.get('etag'));
  });

  test('DELETE -> 204 with no body (admins); then 404', async () => {
    const created = await api.request('POST', '/orders', { token: editor, body: newOrderBody() });
    const del = await api.request('DELETE', `/orders/${created.body.id}`, { token: admin });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await api.request('GET', `/orders/${created.body.id}`, { token: admin })).status).toBe(
      404,
    );
    expect(
      (await api.request('DELETE', `/orders/${created.body.id}`, { token: admin })).status,
    ).toBe(404);
  });
});

describe('orders: status machine', () => {
  test('pending -> open -> fulfilled; cancel from pending or open; final states refuse with 409', async () => {
    const a = (await api.request('POST', '/orders', { token: editor, body: newOrderBody() })).body;
    const confirmed = await api.request('POST', `/orders/${a.id}/confirm`, { token: editor });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.status).toBe('open');
    // Fulfilment is for admins only, even on one's own order.
    expect((await api.request('POST', `/orders/${a.id}/fulfill`, { token: editor })).body).toEqual({
      error: 'forbidden',
    });
    const fulfilled = await api.request('POST', `/orders/${a.id}/fulfill`, { token: admin });
    expect(fulfilled.body.status).toBe('fulfilled');
    const late = await api.request('POST', `/orders/${a.id}/cancel`, { token: editor });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('invalid_transition');
    const edit = await api.request('PATCH', `/orders/${a.id}`, {
      token: editor,
      body: { note: 'x' },
    });
    expect(edit.status).toBe(409);
    expect(edit.body.error).toBe('order_closed');

    const b = (await api.request('POST', '/orders', { token: editor, body: newOrderBody() })).body;
    const cancelled = await api.request('POST', `/orders/${b.id}/cancel`, { token: editor });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const again = await api.request('POST', `/orders/${b.id}/cancel`, { token: editor });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('invalid_transition');
    expect((await api.request('POST', `/orders/${b.id}/confirm`, { token: editor })).status).toBe(
      409,
    );
  });

  test('fulfilling a pending order is an invalid transition', async () => {
    const o = (await api.request('POST', '/orders', { token: editor, body: newOrderBody() })).body;
    const res = await api.request('POST', `/orders/${o.id}/fulfill`, { token: admin });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('invalid_transition');
  });
});

describe('orders: validation and mass assignment', () => {
  test.each([
    ['id', '00000000-0000-4000-8000-000000000000'],
    ['userId', 'someone-else'],
    ['status', 'fulfilled'],
    ['version', 7],
    ['createdAt', '2020-01-01T00:00:00Z'],
    ['updatedAt', '2020-01-01T00:00:00Z'],
    ['isAdmin', true],
  ])('POST with server-owned or unknown field %s -> 422 naming it', async (field, value) => {
    const res = await api.request('POST', '/orders', {
      token: editor,
      body: newOrderBody({ [field]: value }),
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(Object.keys(res.body.fields)).toEqual([field]);
  });

  test.each(['userId', 'status', 'id', 'createdAt'])(
    'PUT and PATCH refuse %s and write nothing',
    async (field) => {
      const o = (await api.request('POST', '/orders', { token: editor, body: newOrderBody() }))
        .body;
      const patch = await api.request('PATCH', `/orders/${o.id}`, {
        token: editor,
        body: { [field]: 'x', note: 'n' },
      });
      expect(patch.status).toBe(422);
      expect(patch.body.fields[field]).toBeDefined();
      const put = await api.request('PUT', `/orders/${o.id}`, {
        token: editor,
        body: newOrderBody({ [field]: 'x' }),
      });
      expect(put.status).toBe(422);
      const after = await api.request('GET', `/orders/${o.id}`, { token: editor });
      expect(after.body).toEqual(o);
    },
  );

  test('field errors are mapped per field', async () => {
    const res = await api.request('POST', '/orders', {
      token: editor,
      body: { customer: '', amount: 10.5, currency: 'euro', items: [{ sku: 'A', quantity: 0 }] },
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.fields).sort()).toEqual([
      'amount',
      'currency',
      'customer',
      'items.0.quantity',
    ]);
    for (const messages of Object.values(res.body.fields))
      expect(Array.isArray(messages)).toBe(true);
  });

  test('a stale body version -> 409 version_conflict, nothing written', async () => {
    const o = (await api.request('POST', '/orders', { token: editor, body: newOrderBody() })).body;
    await api.request('PATCH', `/orders/${o.id}`, { token: editor, body: { note: 'v2' } });
    const stale = await api.request('PATCH', `/orders/${o.id}`, {
      token: editor,
      body: { note: 'v3', version: 1 },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toBe('version_conflict');
    const current = await api.request('PUT', `/orders/${o.id}`, {
      token: editor,
      body: newOrderBody({ version: 2 }),
    });
    expect(current.status).toBe(200);
    expect(current.body.version).toBe(3);
  });
});
