import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { User } from '@portcullis/accounts';
import { makeUser } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let viewer: string;
let editor: string;
let admin: string;
let users: User[];
let victim: User;

beforeAll(async () => {
  api = await startTestApi();
  const made: User[] = [];
  for (const role of ['admin', 'editor', 'viewer', 'viewer', 'viewer'])
    made.push(await makeUser(api.database.db, [role]));
  // Three of them sign in at the auth server; the cursor test expects exactly these five.
  admin = await api.tokenFor(made[0]!);
  editor = await api.tokenFor(made[1]!);
  viewer = await api.tokenFor(made[2]!);
  // A user nobody signed in as, for the DELETE tests.
  victim = made[4]!;
  users = [...made].sort((a, b) => (a.id < b.id ? -1 : 1));
});
afterAll(() => api.close());

describe('GET /users', () => {
  test('cursor pages walk every user once; the last page has nextCursor null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&after=${encodeURIComponent(cursor)}` : '?limit=2';
      const res = await api.request('GET', `/users${query}`, { token: viewer });
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((u: User) => u.id));
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(users.map((u) => u.id));
    expect(pages).toBe(3);
  });

  test('no password hash, ever', async () => {
    const res = await api.request('GET', '/users?limit=100', { token: viewer });
    expect(res.text).not.toMatch(/password|argon2/i);
    expect(Object.keys(res.body.items[0]).sort()).toEqual([
      'createdAt',
      'email',
      'id',
      'name',
      'roles',
      'updatedAt',
    ]);
  });

  test('a tampered or forged cursor -> 400 invalid_cursor', async () => {
    const first = await api.request('GET', '/users?limit=1', { token: viewer });
    const cursor: string = first.body.nextCursor;
    const [payload, tag] = cursor.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ id: users[3]!.id })).toString('base64url');
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    for (const bad of [
      `${forgedPayload}.${tag}`,
      `${payload}.${flip(tag!)}`,
      payload!,
      'garbage',
      `${cursor}.x`,
    ]) {
      const res = await api.request('GET', `/users?after=${encodeURIComponent(bad)}`, {
        token: viewer,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_cursor');
    }
  });

  test('limit bounds and unknown parameters -> 422', async () => {
    for (const query of ['limit=0', 'limit=101', 'page=2', 'after=a&after=b']) {
      expect((await api.request('GET', `/users?${query}`, { token: viewer })).status).toBe(422);
    }
  });

  test('needs users:read', async () => {
    const none = await api.token('nobody', []);
    expect((await api.request('GET', '/users', { token: none })).body).toEqual({
      error: 'forbidden',
    });
  });
});

describe('GET /users/:id and DELETE /users/:id', () => {
  test('GET one user with ETag; unknown id -> 404', async () => {
    const res = await api.request('GET', `/users/${users[0]!.id}`, { token: viewer });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: users[0]!.id,
      email: users[0]!.email,
      roles: users[0]!.roles,
    });
    const cached = await api.request('GET', `/users/${users[0]!.id}`, {
      token: viewer,
      headers: { 'if-none-match': res.headers.get('etag')! },
    });
    expect(cached.status).toBe(304);
    expect((await api.request('GET', '/users/no-such-user', { token: viewer })).status).toBe(404);
  });

  test('DELETE without users:delete -> 403 exactly {"error":"forbidden"}', async () => {
    for (const token of [viewer, editor]) {
      const res = await api.request('DELETE', `/users/${victim.id}`, { token });
      expect(res.status).toBe(403);
      expect(res.text).toBe('{"error":"forbidden"}');
    }
    expect((await api.request('GET', `/users/${victim.id}`, { token: viewer })).status).toBe(200);
  });

  test('an admin deletes: 204 without a body, then 404', async () => {
    const res = await api.request('DELETE', `/users/${victim.id}`, { token: admin });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.request('GET', `/users/${victim.id}`, { token: viewer })).status).toBe(404);
    expect((await api.request('DELETE', `/users/${victim.id}`, { token: admin })).status).toBe(404);
  });
});
