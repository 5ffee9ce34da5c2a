import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Adapter } from 'oidc-provider';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { createClientsRepo } from '../src/data/clients-repo.js';
import { createOidcAdapterFactory } from '../src/data/oidc-adapter.js';

// The adapter coalesces its reads, consumes and writes across concurrent requests: each
// caller must still get exactly the answer it would get alone.
let t: TestDatabase;
let adapterFor: (model: string) => Adapter;
const statements: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  adapterFor = createOidcAdapterFactory(t.db, createClientsRepo(t.db));
  t.db.on('query', (query: { sql: string }) => statements.push(query.sql));
});
afterAll(async () => {
  await t.close();
});

const payload = (id: string, grantId: string, sub: string) => ({
  jti: id,
  grantId,
  accountId: sub,
  kind: 'RefreshToken',
  iat: Math.floor(Date.now() / 1000),
});

async function counted<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  statements.length = 0;
  const result = await run();
  return { result, statements: [...statements] };
}

describe('the OIDC adapter under concurrent calls', () => {
  test('writes made together are one statement; each row holds its own payload', async () => {
    const tokens = adapterFor('RefreshToken');
    const grants = adapterFor('Grant');
    const { statements } = await counted(() =>
      Promise.all([
        tokens.upsert('rt-a', payload('rt-a', 'g-a', 'alice'), 3600),
        tokens.upsert('rt-b', payload('rt-b', 'g-b', 'bob'), 3600),
        grants.upsert('g-a', { jti: 'g-a', accountId: 'alice', kind: 'Grant' }, 3600),
        grants.upsert('g-b', { jti: 'g-b', accountId: 'bob', kind: 'Grant' }, 0),
        // The same row twice in one batch: the last write stands, as if they came in turn.
        tokens.upsert('rt-c', payload('rt-c', 'g-x', 'first'), 3600),
        tokens.upsert('rt-c', payload('rt-c', 'g-c', 'carol'), 3600),
      ]),
    );
    expect(statements).toHaveLength(1);
    const rows = await t
      .db<{ id: string; expires_at: Date | null }>('oidc_payloads')
      .whereIn('id', ['rt-a', 'rt-b', 'rt-c', 'g-b']);
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId['rt-a']).toMatchObject({ grant_id: 'g-a', payload: { accountId: 'alice' } });
    expect(byId['rt-b']).toMatchObject({ grant_id: 'g-b', payload: { accountId: 'bob' } });
    expect(byId['rt-c']).toMatchObject({ grant_id: 'g-c', payload: { accountId: 'carol' } });
    expect(byId['g-b']?.expires_at).toBeNull();
    expect(byId['rt-a']?.expires_at?.getTime()).toBeGreaterThan(Date.now() + 3500_000);
  });

  test('reads made together are one statement; each gets its own token, unknown ids nothing', async () => {
    const tokens = adapterFor('RefreshToken');
    const { result, statements } = await counted(() =>
      Promise.all([tokens.find('rt-b'), tokens.find('rt-missing'), tokens.find('rt-a')]),
    );
    expect(statements).toHaveLength(1);
    expect(result.map((p) => p?.accountId)).toEqual(['bob', undefined, 'alice']);
  });

  test('a key PostgreSQL cannot hold (NUL) names nothing; the reads beside it are answered', async () => {
    const tokens = adapterFor('RefreshToken');
    const { result, statements } = await counted(() =>
      Promise.all([tokens.find('rt-a'), tokens.find('rt-\u0000'), tokens.find('rt-b')]),
    );
    expect(result.map((p) => p?.accountId)).toEqual(['alice', undefined, 'bob']);
    expect(statements).toHaveLength(1);
  });

  test('NUL: lookups by uid, user code or client id find nothing; a payload with one is invalid_request', async () => {
    expect(await adapterFor('Session').findByUid!('u\u0000')).toBeUndefined();
    expect(await adapterFor('DeviceCode').findByUserCode!('AB\u0000C')).toBeUndefined();
    expect(await adapterFor('Client').find('client\u0000')).toBeUndefined();
    await expect(
      adapterFor('Interaction').upsert('i-1', { jti: 'i-1', params: { state: 'x\u0000' } }, 60),
    ).rejects.toMatchObject({ error: 'invalid_request' });
  });

  test('one token consumed by several callers at once: exactly the first wins, the rest are reuse', async () => {
    const tokens = adapterFor('RefreshToken');
    const results = await Promise.allSettled([
      tokens.consume('rt-a'),
      tokens.consume('rt-a'),
      tokens.consume('rt-b'),
      tokens.consume('rt-a'),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      error: 'invalid_grant',
      error_description: 'grant request is invalid',
    });
    // Reuse revokes the whole grant of rt-a (its token and the grant row); rt-b's is untouched.
    expect(await tokens.find('rt-a')).toBeUndefined();
    expect(await adapterFor('Grant').find('g-a')).toBeUndefined();
    expect(await tokens.find('rt-b')).toMatchObject({
      accountId: 'bob',
      consumed: expect.any(Number),
    });
    // Consumed once is consumed for good.
    await expect(tokens.consume('rt-b')).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe('siblings of a retried refresh token (REFRESH_REUSE_INTERVAL)', () => {
  // Successors of one token, as honest retries within the interval make them: of those
  // used, only the first may go on (docs/security.md), however they arrive.
  async function siblings(parent: string, n: number): Promise<string[]> {
    const tokens = createOidcAdapterFactory(t.db, createClientsRepo(t.db), undefined, {
      refreshReuseInterval: 5,
    })('RefreshToken');
    await tokens.upsert(parent, payload(parent, `g-${parent}`, 'dave'), 3600);
    const ids = Array.from({ length: n }, (_, i) => `${parent}-s${i}`);
    for (const id of ids) await tokens.upsert(id, payload(id, `g-${parent}`, 'dave'), 3600);
    await t.db('oidc_payloads').whereIn('id', ids).update({ rotated_from: parent });
    return ids;
  }
  const consumer = () =>
    createOidcAdapterFactory(t.db, createClientsRepo(t.db), undefined, {
      refreshReuseInterval: 5,
    })('RefreshToken');

  test('siblings consumed together (one batch): exactly one wins', async () => {
    const ids = await siblings('rt-batch', 10);
    const tokens = consumer();
    const results = await Promise.allSettled(ids.map((id) => tokens.consume(id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  test('siblings consumed in separate transactions at once: exactly one wins', async () => {
    const ids = await siblings('rt-apart', 10);
    // One adapter each: separate statements, on separate connections where the pool has them.
    const results = await Promise.allSettled(ids.map((id) => consumer().consume(id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('a rotation abandoned between the consume and the save of its successor', () => {
  const tokens = () =>
    createOidcAdapterFactory(t.db, createClientsRepo(t.db), undefined, {
      rotationBound: 0.2,
    })('RefreshToken');

  test('consumed with no successor saved: after the bound it reads unconsumed and rotates again', async () => {
    await tokens().upsert('rt-abandoned', payload('rt-abandoned', 'g-abandoned', 'erin'), 3600);
    await tokens().consume('rt-abandoned');
    // Right after the consume, a rotation may still be under way: the token is used.
    expect((await tokens().find('rt-abandoned'))?.consumed).toBeTruthy();
    await new Promise((r) => setTimeout(r, 400));
    expect((await tokens().find('rt-abandoned'))?.consumed).toBeUndefined();
    await expect(tokens().consume('rt-abandoned')).resolves.toBeUndefined();
  });
});
