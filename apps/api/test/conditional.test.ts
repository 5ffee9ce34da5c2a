import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newOrderBody } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let editor: string;
let admin: string;

beforeAll(async () => {
  api = await startTestApi();
  editor = await api.token('cond-editor', ['editor']);
  admin = await api.token('cond-admin', ['admin']);
});
afterAll(() => api.close());

const create = async () =>
  (await api.request('POST', '/orders', { token: editor, body: newOrderBody() })).body;

describe('ETag and If-None-Match', () => {
  test('a single-resource GET is privately cacheable with a strong ETag; If-None-Match -> 304 without a body', async () => {
    const order = await create();
    const first = await api.request('GET', `/orders/${order.id}`, { token: editor });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(first.headers.get('cache-control')).toBe(
      'private, max-age=60, stale-while-revalidate=120',
    );
    expect(first.headers.get('vary')).toMatch(/Authorization/);
    expect(first.headers.get('vary')).toMatch(/Cookie/);

    const again = await api.request('GET', `/orders/${order.id}`, {
      token: editor,
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const weak = await api.request('GET', `/orders/${order.id}`, {
      token: editor,
      headers: { 'if-none-match': `"x", W/${etag}` },
    });
    expect(weak.status).toBe(304);

    await api.request('PATCH', `/orders/${order.id}`, { token: editor, body: { note: 'changed' } });
    const changed = await api.request('GET', `/orders/${order.id}`, {
      token: editor,
      headers: { 'if-none-match': etag },
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  test('GET never changes state: repeated reads keep version and ETag', async () => {
    const order = await create();
    const a = await api.request('GET', `/orders/${order.id}`, { token: editor });
    const b = await api.request('GET', `/orders/${order.id}`, { token: editor });
    expect(b.body.version).toBe(1);
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
  });
});

describe('If-Match', () => {
  test('a stale If-Match -> 412 and nothing is written (PATCH, PUT, cancel, DELETE)', async () => {
    const order = await create();
    const stale = (await api.request('GET', `/orders/${order.id}`, { token: editor })).headers.get(
      'etag',
    )!;
    await api.request('PATCH', `/orders/${order.id}`, { token: editor, body: { note: 'v2' } });
    const attempts = [
      ['PATCH', '', editor, { note: 'lost' }],
      ['PUT', '', editor, newOrderBody({ customer: 'lost' })],
      ['POST', '/cancel', editor, undefined],
      ['DELETE', '', admin, undefined],
    ] as const;
    for (const [method, suffix, token, body] of attempts) {
      const res = await api.request(method, `/orders/${order.id}${suffix}`, {
        token,
        body,
        headers: { 'if-match': stale },
      });
      expect(res.status).toBe(412);
      expect(res.body.error).toBe('precondition_failed');
    }
    const now = await api.request('GET', `/orders/${order.id}`, { token: editor });
    expect(now.body).toMatchObject({ version: 2, note: 'v2', status: 'pending' });
  });

  test('a current If-Match succeeds and returns the new ETag', async () => {
    const order = await create();
    const etag = (await api.request('GET', `/orders/${order.id}`, { token: editor })).headers.get(
      'etag',
    )!;
    const res = await api.request('PATCH', `/orders/${order.id}`, {
      token: editor,
      body: { amount: 1 },
      headers: { 'if-match': etag },
    });
    expect(res.status).toBe(200);
    const next = await api.request('GET', `/orders/${order.id}`, { token: editor });
    expect(res.headers.get('etag')).toBe(next.headers.get('etag'));
  });

  test('two concurrent writes with the same If-Match: exactly one 200, one 412', async () => {
    for (let round = 0; round < 5; round += 1) {
      const order = await create();
      const etag = (await api.request('GET', `/orders/${order.id}`, { token: editor })).headers.get(
        'etag',
      )!;
      const results = await Promise.all(
        ['first', 'second'].map((note) =>
          api.request('PATCH', `/orders/${order.id}`, {
            token: editor,
            body: { note },
            headers: { 'if-match': etag },
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
      const winner = results.find((r) => r.status === 200)!;
      const stored = await api.request('GET', `/orders/${order.id}`, { token: editor });
      expect(stored.body).toMatchObject({ version: 2, note: winner.body.note });
    }
  });

  test('concurrent cancels with the same If-Match: one 200, one 412', async () => {
    const order = await create();
    const etag = (await api.request('GET', `/orders/${order.id}`, { token: editor })).headers.get(
      'etag',
    )!;
    const results = await Promise.all(
      [1, 2].map(() =>
        api.request('POST', `/orders/${order.id}/cancel`, {
          token: editor,
          headers: { 'if-match': etag },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
  });
});
