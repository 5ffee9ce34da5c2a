import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  createClient,
  createUser,
  discover,
  enrolTotp,
  pkceSignIn,
  publicSpa,
} from '@portcullis/testing';

// What the admin console reads and does through the admin API (README "Admin API").
let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

type Item = Record<string, unknown>;
const ids = (items: Item[], key = 'id') => items.map((i) => i[key]);
const tag = () => randomBytes(4).toString('hex');

async function userWith(email: string, name: string) {
  const res = await t.admin('POST', '/admin/users', {
    email,
    name,
    password: `pw-${randomBytes(8).toString('hex')}`,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe('users: search and one user', () => {
  test('q matches a substring of email or name, case-insensitively; LIKE wildcards are literal', async () => {
    const k = tag();
    const ann = await userWith(`ann.${k}@example.com`, 'Ann Smith');
    const bob = await userWith(`bob.${k}@example.com`, `Robert ${k.toUpperCase()}_x`);
    const pct = await userWith(`pct.${k}@example.com`, `100% ${k}`);

    const search = async (q: string, limit = 100) => {
      const res = await t.admin('GET', `/admin/users?q=${encodeURIComponent(q)}&limit=${limit}`);
      expect(res.status).toBe(200);
      return res.body as { items: Item[]; nextCursor: string | null };
    };
    expect(ids((await search(`ANN.${k}`)).items)).toEqual([ann]);
    expect(ids((await search(k)).items).sort()).toEqual([ann, bob, pct].sort());
    expect(ids((await search(`${k}_x`)).items)).toEqual([bob]);
    // `_` and `%` match only themselves.
    expect(ids((await search(`${k.slice(0, 3)}_`)).items)).toEqual([]);
    expect(ids((await search(`100% ${k}`)).items)).toEqual([pct]);
    expect(ids((await search(`%${k}`)).items)).toEqual([]);

    // Cursor paging over the matches.
    const first = await search(k, 2);
    expect(first.items).toHaveLength(2);
    const rest = await t.admin(
      'GET',
      `/admin/users?q=${k}&limit=2&after=${encodeURIComponent(first.nextCursor!)}`,
    );
    expect([...ids(first.items), ...ids(rest.body.items)].sort()).toEqual([ann, bob, pct].sort());
    expect(rest.body.nextCursor).toBeNull();

    // An empty q searches for nothing in particular; a long one is 422.
    expect((await t.admin('GET', '/admin/users?q=&limit=1')).body.items).toHaveLength(1);
    const long = await t.admin('GET', `/admin/users?q=${'a'.repeat(201)}`);
    expect(long.status).toBe(422);
    expect(long.body).toMatchObject({
      error: 'validation_failed',
      fields: { q: expect.any(Array) },
    });
  });

  test('GET /admin/users/:id is the user with the kinds of their second factors; 404 when absent', async () => {
    const user = await createUser(t);
    const plain = await t.admin('GET', `/admin/users/${user.id}`);
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({
      id: user.id,
      email: user.email,
      name: 'Test User',
      roles: ['editor'],
      disabledAt: null,
      emailVerifiedAt: expect.any(String),
      createdAt: expect.any(String),
      factors: [],
    });
    await enrolTotp(t, browser(), user);
    expect((await t.admin('GET', `/admin/users/${user.id}`)).body.factors).toEqual(['totp']);
    const missing = await t.admin('GET', '/admin/users/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: 'not_found' });
  });
});

describe("users: an app's grant", () => {
  test('DELETE /admin/users/:id/grants/:grantId revokes the grant and its tokens, audited', async () => {
    const user = await createUser(t);
    const config = await discover(t, (await publicSpa(t)).client_id);
    const tokens = await pkceSignIn(config, user, { scope: 'openid offline_access' });
    const listed = await t.admin('GET', `/admin/users/${user.id}/sessions`);
    const [grant] = listed.body.grants as { id: string }[];
    expect(grant).toBeDefined();

    const other = await createUser(t);
    expect((await t.admin('DELETE', `/admin/users/${other.id}/grants/${grant!.id}`)).status).toBe(
      404,
    );
    const revoked = await t.admin('DELETE', `/admin/users/${user.id}/grants/${grant!.id}`);
    expect(revoked.status).toBe(204);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect((await t.admin('GET', `/admin/users/${user.id}/sessions`)).body.grants).toEqual([]);
    const again = await t.admin('DELETE', `/admin/users/${user.id}/grants/${grant!.id}`);
    expect(again.status).toBe(404);
    const audit = await t.admin('GET', `/admin/audit?kind=grant_revoked&subject=${user.id}`);
    expect(audit.body.items).toEqual([
      expect.objectContaining({
        grantId: grant!.id,
        actor: 'admin-token',
        detail: { by: 'admin' },
      }),
    ]);
  });
});

describe('clients: search and one client', () => {
  test('q matches a substring of client_id or client_name; GET /admin/clients/:id; 404 when absent', async () => {
    const k = tag();
    const a = await createClient(t, {
      client_id: `reports-${k}`,
      client_name: 'Nightly',
      grant_types: ['client_credentials'],
    });
    const b = await createClient(t, {
      client_id: `other-${tag()}`,
      client_name: `Billing ${k.toUpperCase()}`,
      grant_types: ['client_credentials'],
    });
    const search = async (q: string) =>
      ids(
        (await t.admin('GET', `/admin/clients?q=${encodeURIComponent(q)}`)).body.items,
        'client_id',
      );
    expect((await search(k)).sort()).toEqual([a.client_id, b.client_id].sort());
    expect(await search(`BILLING ${k}`)).toEqual([b.client_id]);
    expect(await search(`REPORTS-${k}`)).toEqual([a.client_id]);

    const one = await t.admin('GET', `/admin/clients/${a.client_id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      client_id: a.client_id,
      client_name: 'Nightly',
      created_at: expect.any(String),
    });
    expect(one.body.client_secret).toBeUndefined();
    const missing = await t.admin('GET', `/admin/clients/nope-${k}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: 'not_found' });
  });
});

describe('audit: filters', () => {
  test('by kind, actor, subject, client_id and time; invalid times are 422', async () => {
    const started = new Date(Date.now() - 1000).toISOString();
    const user = await createUser(t);
    const client = await createClient(t, { grant_types: ['client_credentials'] });
    await t.admin('POST', `/admin/users/${user.id}/disable`);
    await t.admin('POST', `/admin/users/${user.id}/enable`);

    const list = async (query: string) => {
      const res = await t.admin('GET', `/admin/audit?${query}`);
      expect(res.status).toBe(200);
      return res.body as { items: Item[]; nextBefore: string | null };
    };
    const kinds = (items: Item[]) => items.map((e) => e['kind']);
    expect(kinds((await list(`subject=${user.id}`)).items)).toEqual([
      'user_enabled',
      'user_disabled',
      'user_created',
    ]);
    expect(kinds((await list(`subject=${user.id}&kind=user_disabled`)).items)).toEqual([
      'user_disabled',
    ]);
    expect((await list(`client_id=${client.client_id}`)).items).toEqual([
      expect.objectContaining({ kind: 'client_created', actor: 'admin-token' }),
    ]);
    const since = await list(`since=${encodeURIComponent(started)}&actor=admin-token&limit=100`);
    expect(since.items.length).toBeGreaterThanOrEqual(4);
    for (const e of since.items) expect(new Date(String(e['at'])) >= new Date(started)).toBe(true);
    expect((await list(`until=${encodeURIComponent(started)}&subject=${user.id}`)).items).toEqual(
      [],
    );
    expect((await list(`actor=nobody-${tag()}`)).items).toEqual([]);

    // Paging within a filter.
    const page1 = await list(`subject=${user.id}&limit=2`);
    expect(page1.items).toHaveLength(2);
    const page2 = await list(`subject=${user.id}&limit=2&before=${page1.nextBefore}`);
    expect(kinds(page2.items)).toEqual(['user_created']);
    expect(page2.nextBefore).toBeNull();

    for (const bad of ['since=yesterday', 'until=2026-13-01T00:00:00Z', 'since=2026-01-02']) {
      const res = await t.admin('GET', `/admin/audit?${bad}`);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error: 'validation_failed' });
      expect(Object.keys(res.body.fields)).toEqual([bad.split('=')[0]]);
    }
  });
});

describe('signing keys: retire', () => {
  const keys = async () =>
    (await t.admin('GET', '/admin/signing-keys')).body.items as {
      kid: string;
      status: string;
      alg: string;
    }[];
  const jwksKids = async () =>
    (
      (await (await fetch(`${t.issuer}/.well-known/jwks.json`)).json()) as { keys: Item[] }
    ).keys.map((k) => k['kid']);

  test('a next key leaves the JWKS and the active key keeps signing; an active key is 409; unknown 404', async () => {
    const active = (await keys()).find((k) => k.status === 'active' && k.alg === 'RS256')!;
    const next = await t.admin('POST', '/admin/signing-keys', { alg: 'RS256' });
    expect(next.body).toMatchObject({ status: 'next' });
    expect(await jwksKids()).toContain(next.body.kid);

    const refused = await t.admin('POST', `/admin/signing-keys/${active.kid}/retire`);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'conflict',
      message: 'the key signs: rotate a new key in first',
    });

    const retired = await t.admin('POST', `/admin/signing-keys/${next.body.kid}/retire`);
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ kid: next.body.kid, status: 'expired' });
    expect(await jwksKids()).not.toContain(next.body.kid);
    // The key it was to replace is no longer scheduled to retire.
    const listed = (await t.admin('GET', '/admin/signing-keys')).body.items as Item[];
    expect(listed.find((k) => k['kid'] === active.kid)).toMatchObject({
      status: 'active',
      retired_at: null,
      published_until: null,
    });
    expect(listed.find((k) => k['kid'] === next.body.kid)).toMatchObject({ status: 'expired' });

    const twice = await t.admin('POST', `/admin/signing-keys/${next.body.kid}/retire`);
    expect(twice.status).toBe(409);
    const unknown = await t.admin('POST', '/admin/signing-keys/no-such-kid/retire');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'not_found' });

    const audit = await t.admin('GET', '/admin/audit?kind=signing_key_retired');
    expect(audit.body.items[0]).toMatchObject({
      actor: 'admin-token',
      detail: { kid: next.body.kid, alg: 'RS256', was: 'next' },
    });
  });

  test('a retired key leaves the JWKS at once', async () => {
    const before = (await keys()).find((k) => k.status === 'active' && k.alg === 'RS256')!;
    const rotated = await t.admin('POST', '/admin/signing-keys', { alg: 'RS256', activate: 'now' });
    expect(rotated.body).toMatchObject({ status: 'active' });
    expect((await keys()).find((k) => k.kid === before.kid)).toMatchObject({ status: 'retired' });
    expect(await jwksKids()).toContain(before.kid);

    const retired = await t.admin('POST', `/admin/signing-keys/${before.kid}/retire`);
    expect(retired.status).toBe(200);
    expect(await jwksKids()).not.toContain(before.kid);
    expect(await jwksKids()).toContain(rotated.body.kid);
    // The server still signs: a new sign-in gets tokens.
    const config = await discover(t, (await publicSpa(t)).client_id);
    const tokens = await pkceSignIn(config, await createUser(t), { scope: 'openid' });
    expect(tokens.id_token).toBeTruthy();
  });
});
