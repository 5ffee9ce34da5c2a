import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { makeUser } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';
import { login, sidOf, withSession } from './helpers/credentials.js';

let api: TestApi;
const logLines: string[] = [];

beforeAll(async () => {
  // Every log line is kept, to check that no key ever reaches a log.
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  api = await startTestApi({ deps: { logger: pino({ level: 'debug' }, sink) } });
});
afterAll(() => api.close());

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

async function admin() {
  const user = await makeUser(api.database.db, ['admin']);
  return { user, token: await api.tokenFor(user) };
}

async function createKey(token: string, body: Record<string, unknown> = {}) {
  const reply = await api.request('POST', '/api-keys', {
    token,
    body: { name: 'ci', permissions: ['users:read'], ...body },
  });
  expect(reply.status).toBe(201);
  return reply.body as {
    id: string;
    key: string;
    name: string;
    permissions: string[];
    createdAt: string;
  };
}

describe('POST /api-keys', () => {
  test('returns the key once, stores only its SHA-256 hex', async () => {
    const { user, token } = await admin();
    const reply = await api.request('POST', '/api-keys', {
      token,
      body: { name: 'deploy bot', permissions: ['orders:read', 'users:read'] },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      name: 'deploy bot',
      permissions: ['orders:read', 'users:read'],
      revoked: false,
    });
    expect(reply.body.key).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    expect(reply.headers.get('location')).toBe(`/api-keys/${reply.body.id}`);

    const rows = await api.database.db('api_keys').where('owner_id', user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0].hash).toBe(sha256(reply.body.key));
    expect(JSON.stringify(rows)).not.toContain(reply.body.key.slice(8));

    const list = await api.request('GET', '/api-keys', { token });
    const one = await api.request('GET', `/api-keys/${reply.body.id}`, { token });
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(reply.body.key.slice(8));
      expect(text).not.toContain(rows[0].hash);
    }
    expect(list.body.items[0]).not.toHaveProperty('key');
    expect(one.body).toMatchObject({ id: reply.body.id, name: 'deploy bot' });
  });

  test('works from a browser session too', async () => {
    const { user } = await admin();
    const sid = sidOf(await login(api, user.email))!;
    const reply = await api.request('POST', '/api-keys', {
      body: { name: 'from ui', permissions: ['orders:read'] },
      headers: withSession(sid),
    });
    expect(reply.status).toBe(201);
  });

  test('permissions must be a subset of the creator’s: 422 naming the field', async () => {
    const { token } = await admin();
    for (const permissions of [
      ['events:write'],
      ['nonsense'],
      ['widgets:read'],
      ['orders:read', 'events:*'],
    ]) {
      const reply = await api.request('POST', '/api-keys', {
        token,
        body: { name: 'x', permissions },
      });
      expect(reply.status).toBe(422);
      expect(Object.keys(reply.body.fields)).toEqual(['permissions']);
    }
    const tooFast = await api.request('POST', '/api-keys', {
      token,
      body: { name: 'x', permissions: ['orders:read'], rateLimit: 1_000_000 },
    });
    expect(tooFast.status).toBe(422);
    expect(Object.keys(tooFast.body.fields)).toEqual(['rateLimit']);
  });

  test('needs api-keys:create: a viewer gets 403', async () => {
    const viewer = await makeUser(api.database.db, ['viewer']);
    const token = await api.tokenFor(viewer);
    const reply = await api.request('POST', '/api-keys', {
      token,
      body: { name: 'x', permissions: ['users:read'] },
    });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({ error: 'forbidden' });
  });

  test('an API key cannot manage keys, even with api-keys:*', async () => {
    const { token } = await admin();
    const { key } = await createKey(token, { permissions: ['api-keys:*'] });
    expect(
      (
        await api.request('POST', '/api-keys', {
          token: key,
          body: { name: 'y', permissions: ['api-keys:*'] },
        })
      ).status,
    ).toBe(403);
    expect((await api.request('GET', '/api-keys', { token: key })).status).toBe(403);
    // ...nor sign its owner out everywhere.
    expect((await api.request('POST', '/logout/all', { token: key })).status).toBe(403);
  });
});

describe('authenticating with an API key', () => {
  test('acts with the key’s permissions only, as its owner (subject = owner id)', async () => {
    const { user, token } = await admin();
    const { key } = await createKey(token, { permissions: ['users:read'] });
    expect((await api.request('GET', `/users/${user.id}`, { token: key })).status).toBe(200);
    const victim = await makeUser(api.database.db);
    const denied = await api.request('DELETE', `/users/${victim.id}`, { token: key });
    expect(denied.status).toBe(403);
  });

  test('a key never exceeds its owner’s current role', async () => {
    const { user, token } = await admin();
    const { key } = await createKey(token, { permissions: ['users:read', 'users:delete'] });
    const victim = await makeUser(api.database.db);
    await api.database
      .db('users')
      .where('id', user.id)
      .update({ roles: JSON.stringify(['viewer']) });
    expect((await api.request('DELETE', `/users/${victim.id}`, { token: key })).status).toBe(403);
    expect((await api.request('GET', `/users/${victim.id}`, { token: key })).status).toBe(200);
  });

  test('malformed keys are refused before any database lookup', async () => {
    const queries: string[] = [];
    const onQuery = (q: { sql: string }) => queries.push(q.sql);
    api.database.db.on('query', onQuery);
    try {
      for (const key of [
        'sk_live_short',
        `sk_live_${'a'.repeat(44)}`,
        `sk_live_${'a'.repeat(42)}~`,
        `sk_test_${'a'.repeat(43)}`,
      ]) {
        const reply = await api.request('GET', '/users', { token: key });
        expect(reply.status).toBe(401);
        expect(reply.headers.get('www-authenticate')).toContain('invalid_token');
      }
    } finally {
      api.database.db.off('query', onQuery);
    }
    expect(queries.filter((sql) => sql.includes('api_keys'))).toEqual([]);
    // The listener does see key lookups (the check above is not vacuous).
    const { token } = await admin();
    const { key } = await createKey(token);
    api.database.db.on('query', onQuery);
    await api
      .request('GET', '/users', { token: key })
      .finally(() => api.database.db.off('query', onQuery));
    expect(queries.filter((sql) => sql.includes('api_keys')).length).toBeGreaterThan(0);
  });

  test('an unknown well-formed key is 401', async () => {
    const reply = await api.request('GET', '/users', { token: `sk_live_${'Z'.repeat(43)}` });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ error: 'invalid_token', message: 'token revoked' });
  });

  test('last_used_at is recorded (at most once a minute)', async () => {
    const { token } = await admin();
    const { id, key } = await createKey(token);
    expect((await api.database.db('api_keys').where({ id }).first()).last_used_at).toBeNull();
    await api.request('GET', '/users', { token: key });
    const first = (await api.database.db('api_keys').where({ id }).first()).last_used_at;
    expect(first).toBeInstanceOf(Date);
    await api.request('GET', '/users', { token: key });
    expect((await api.database.db('api_keys').where({ id }).first()).last_used_at).toEqual(first);
  });

  test('no key ever appears in the logs', async () => {
    const { token } = await admin();
    const { key } = await createKey(token);
    await api.request('GET', '/users', { token: key });
    await api.request('GET', '/users', { token: `${key.slice(0, -1)}!` });
    await api.request('DELETE', '/users/x', { token: key });
    const logs = logLines.join('');
    expect(logs).toContain('"method":"GET"');
    expect(logs).not.toContain(key.slice(8));
    expect(logs).not.toMatch(/sk_live_[A-Za-z0-9_-]{20}/);
  });
});

describe('rotation and revocation', () => {
  test('several keys are active at once; a revoked one is refused on its next request', async () => {
    const { token } = await admin();
    const a = await createKey(token, { name: 'old' });
    const b = await createKey(token, { name: 'new' });
    expect((await api.request('GET', '/users', { token: a.key })).status).toBe(200);
    expect((await api.request('GET', '/users', { token: b.key })).status).toBe(200);

    expect((await api.request('DELETE', `/api-keys/${a.id}`, { token })).status).toBe(204);
    expect((await api.request('GET', '/users', { token: a.key })).status).toBe(401);
    expect((await api.request('GET', '/users', { token: b.key })).status).toBe(200);
    // Idempotent, and the record says so.
    expect((await api.request('DELETE', `/api-keys/${a.id}`, { token })).status).toBe(204);
    const record = await api.request('GET', `/api-keys/${a.id}`, { token });
    expect(record.body).toMatchObject({ revoked: true, revokedAt: expect.any(String) });
    const row = await api.database.db('api_keys').where({ id: a.id }).first();
    expect(row.revoked).toBe(true);
  });

  test('someone else’s key is 404 and stays active; lists show own keys only', async () => {
    const alice = await admin();
    const bob = await admin();
    const key = await createKey(alice.token);
    expect((await api.request('DELETE', `/api-keys/${key.id}`, { token: bob.token })).status).toBe(
      404,
    );
    expect((await api.request('GET', `/api-keys/${key.id}`, { token: bob.token })).status).toBe(
      404,
    );
    expect((await api.request('GET', '/users', { token: key.key })).status).toBe(200);
    const list = await api.request('GET', '/api-keys', { token: bob.token });
    expect(list.body).toEqual({ items: [], nextCursor: null });
  });

  test('GET /api-keys pages with a cursor', async () => {
    const { token } = await admin();
    const ids = [];
    for (const name of ['k1', 'k2', 'k3']) ids.push((await createKey(token, { name })).id);
    const first = await api.request('GET', '/api-keys?limit=2', { token });
    expect(first.body.items).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api.request(
      'GET',
      `/api-keys?limit=2&after=${encodeURIComponent(first.body.nextCursor)}`,
      { token },
    );
    expect(second.body.items).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    const seen = [...first.body.items, ...second.body.items].map((k: { id: string }) => k.id);
    expect(seen.sort()).toEqual(ids.sort());
    const tampered = await api.request('GET', `/api-keys?after=${first.body.nextCursor}x`, {
      token,
    });
    expect(tampered.status).toBe(400);
  });
});
