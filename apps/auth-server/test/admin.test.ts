import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createLocalJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { createClient, decodeJwt, discover, until } from '@portcullis/testing';
import { terminalSecret } from '../src/server.js';

let t: TestAuthServer;
/** What the server showed outside its log at start. */
const shown: string[] = [];
beforeAll(async () => {
  t = await startTestAuthServer({}, { showSecret: (text) => shown.push(text) });
});
afterAll(async () => {
  await t?.close();
});

const jwks = async () =>
  (await (await fetch(`${t.issuer}/.well-known/jwks.json`)).json()) as {
    keys: Record<string, unknown>[];
  };

describe('a generated admin token', () => {
  test('is shown once outside the log; the log names its file, never its value', () => {
    const token = t.server.adminToken;
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain(token);
    const log = JSON.stringify(t.logs);
    expect(log).not.toContain(token);
    const line = t.logs.find((l) => String(l['msg']).includes('admin token'));
    expect(line?.['file']).toMatch(/admin-token$/);
  });

  test('goes to a terminal, and not to a pipe or file that may be collected as a log', () => {
    const written: string[] = [];
    const stream = (isTTY: boolean) => ({ isTTY, write: (s: string) => written.push(s) });
    terminalSecret('secret-a', stream(false));
    terminalSecret('secret-b', stream(true));
    expect(written).toEqual(['secret-b']);
  });
});

describe('admin API', () => {
  test.each([
    ['no token', 'unauthenticated', null, 'Bearer realm="portcullis-admin"'],
    [
      'wrong token',
      'invalid_token',
      'x'.repeat(43),
      'Bearer realm="portcullis-admin", error="invalid_token"',
    ],
  ])('%s is 401 %s with the challenge the API sends', async (_name, code, token, challenge) => {
    for (const [method, path] of [
      ['GET', '/admin/clients'],
      ['POST', '/admin/users'],
      ['GET', '/admin/signing-keys'],
      ['GET', '/admin/audit'],
    ] as const) {
      const res = await t.admin(method, path, method === 'POST' ? {} : undefined, token);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: code, message: expect.any(String) });
      expect(res.res.headers.get('www-authenticate')).toBe(challenge);
    }
  });

  test('bad bodies get the API codes: malformed_json, unsupported_media_type, method_not_allowed', async () => {
    const post = (body: string, type: string) =>
      fetch(`${t.server.adminUrl}/admin/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.server.adminToken}`, 'content-type': type },
        body,
      });
    const malformed = await post('{"email":', 'application/json');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'malformed_json' });
    const form = await post('email=a%40example.com', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
    expect(await form.json()).toMatchObject({ error: 'unsupported_media_type' });
    const put = await t.admin('PUT', '/admin/users', {});
    expect(put.status).toBe(405);
    expect(put.body).toEqual({ error: 'method_not_allowed' });
    const missing = await t.admin('GET', '/admin/nothing');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: 'not_found' });
  });

  test('clients: create (secret shown once), list without secrets, delete', async () => {
    const created = await createClient(t, {
      client_name: 'Reporting job',
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    expect(created.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      roles: ['viewer'],
    });
    const list = await t.admin('GET', '/admin/clients');
    const listed = list.body.items.find(
      (c: { client_id: string }) => c.client_id === created.client_id,
    );
    expect(listed).toBeDefined();
    expect(listed.client_secret).toBeUndefined();
    const config = await discover(t, created.client_id, created.client_secret);
    // The client is now in the server's client cache; the delete must still hold at once.
    expect((await oidc.clientCredentialsGrant(config)).access_token).toBeTruthy();
    expect((await t.admin('DELETE', `/admin/clients/${created.client_id}`)).status).toBe(204);
    expect((await t.admin('DELETE', `/admin/clients/${created.client_id}`)).status).toBe(404);
    await expect(oidc.clientCredentialsGrant(config)).rejects.toMatchObject({ status: 401 });
  });

  test('a client deleted by another instance is refused here once its cache entry lapses', async () => {
    const created = await createClient(t, { grant_types: ['client_credentials'] });
    const config = await discover(t, created.client_id, created.client_secret);
    expect((await oidc.clientCredentialsGrant(config)).access_token).toBeTruthy();
    // Another auth-server instance deletes it: only the shared table changes.
    await t.database.db('clients').where({ id: created.client_id }).del();
    // Its client cache holds entries briefly; the next lookup after that reads the table.
    const refusal = await until(
      () =>
        oidc.clientCredentialsGrant(config).then(
          () => undefined,
          (error: unknown) => error,
        ),
      (error) => error !== undefined,
      20_000,
    );
    expect(refusal).toMatchObject({ status: 401 });
  });

  test('clients: a generated id is hex, so a command line never takes it for an option', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.admin('POST', '/admin/clients', {
        grant_types: ['client_credentials'],
        roles: ['viewer'],
      });
      expect(res.status).toBe(201);
      expect(res.body.client_id).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  test('clients: invalid metadata is 422 with fields', async () => {
    const res = await t.admin('POST', '/admin/clients', {
      redirect_uris: ['not a url'],
      grant_types: ['password'],
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(Object.keys(res.body.fields)).toEqual(
      expect.arrayContaining(['redirect_uris', 'grant_types']),
    );
  });

  test.each(['valueOf', 'constructor', 'toString', 'hasOwnProperty'])(
    'a member named %s is 422 naming it, not a 500 (found by the fuzz test)',
    async (key) => {
      for (const path of ['/admin/clients', '/admin/users', '/admin/registration-tokens']) {
        const res = await t.admin('POST', path, { [key]: 'null' });
        expect({ path, status: res.status }).toEqual({ path, status: 422 });
        expect(res.body.fields[key]).toEqual(['unknown or read-only field']);
      }
    },
  );

  test('users: create 201, duplicate 409, invalid 422, list with cursor', async () => {
    const ok = await t.admin('POST', '/admin/users', {
      email: 'Ann@example.com',
      password: 'long-enough-pw',
      roles: ['viewer'],
      name: 'Ann',
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      id: expect.any(String),
      email: 'Ann@example.com',
      roles: ['viewer'],
    });
    const dup = await t.admin('POST', '/admin/users', {
      email: 'ann@example.com',
      password: 'long-enough-pw',
      roles: [],
    });
    expect(dup.status).toBe(409);
    const bad = await t.admin('POST', '/admin/users', {
      email: 'nope',
      password: 'short',
      roles: ['root'],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe('validation_failed');
    expect(Object.keys(bad.body.fields)).toEqual(expect.arrayContaining(['email', 'roles']));
    const weak = await t.admin('POST', '/admin/users', {
      email: 'weak@example.com',
      password: 'short',
      roles: [],
    });
    expect(weak.status).toBe(422);
    expect(weak.body.fields.password).toBeDefined();
    await t.admin('POST', '/admin/users', {
      email: 'bob@example.com',
      password: 'long-enough-pw',
      roles: [],
    });
    const page1 = await t.admin('GET', '/admin/users?limit=1');
    expect(page1.body.items).toHaveLength(1);
    expect(page1.body.items[0].password_hash).toBeUndefined();
    const page2 = await t.admin('GET', `/admin/users?limit=1&after=${page1.body.nextCursor}`);
    expect(page2.body.items[0].id).not.toBe(page1.body.items[0].id);
  });

  test('signing keys: emergency rotation signs at once; old tokens stay verifiable', async () => {
    const client = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['editor'],
    });
    const config = await discover(t, client.client_id, client.client_secret);
    const before = await oidc.clientCredentialsGrant(config);
    const oldKid = decodeJwt(before.access_token).header.kid;

    const rotated = await t.admin('POST', '/admin/signing-keys', { alg: 'ES256', activate: 'now' });
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({ alg: 'ES256', status: 'active' });

    const after = await oidc.clientCredentialsGrant(config);
    const { header } = decodeJwt(after.access_token);
    expect(header.kid).toBe(rotated.body.kid);
    expect(header.alg).toBe('ES256');

    const published = await jwks();
    expect(published.keys.map((k) => k['kid'])).toEqual(
      expect.arrayContaining([oldKid, rotated.body.kid]),
    );
    for (const k of published.keys) expect(k['d']).toBeUndefined();
    const keySet = createLocalJWKSet(published as never);
    const opts = { issuer: t.issuer, audience: t.apiAudience, typ: 'at+jwt' };
    await expect(jwtVerify(before.access_token, keySet, opts)).resolves.toBeDefined();
    await expect(jwtVerify(after.access_token, keySet, opts)).resolves.toBeDefined();

    // RS256 again: the previous RS256 key is retired but still published.
    const again = await t.admin('POST', '/admin/signing-keys', { alg: 'RS256', activate: 'now' });
    const list = await t.admin('GET', '/admin/signing-keys');
    const byKid = Object.fromEntries(list.body.items.map((k: { kid: string }) => [k.kid, k]));
    expect(byKid[again.body.kid]).toMatchObject({ signing: true, status: 'active' });
    expect(byKid[oldKid]).toMatchObject({ status: 'retired', published_until: expect.any(String) });
    expect(byKid[oldKid].public_jwk.d).toBeUndefined();
    const published2 = await jwks();
    expect(published2.keys.map((k) => k['kid'])).toContain(oldKid);
    // Only the signing key of each alg may sign; the others are published verify-only.
    const ops = Object.fromEntries(published2.keys.map((k) => [k['kid'], k['key_ops']]));
    expect(ops[oldKid]).toEqual(['verify']);
    expect(ops[again.body.kid]).toBeUndefined();
    await expect(
      jwtVerify(before.access_token, createLocalJWKSet(published2 as never), opts),
    ).resolves.toBeDefined();

    // Private keys are encrypted at rest.
    const rows = await t.database.db('signing_keys').select('private_jwk_enc');
    for (const r of rows) expect(r.private_jwk_enc).toMatch(/^v1\./);
  });

  test('audit lists events newest first', async () => {
    const res = await t.admin('GET', '/admin/audit?limit=5');
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeGreaterThan(0);
    expect(res.body.items.map((e: { kind: string }) => e.kind)).toContain('signing_key_rotated');
  });

  test('audit: a cursor beyond any row id is 422 naming it, not a database error', async () => {
    const res = await t.admin('GET', '/admin/audit?before=99999999999999999999999');
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      error: 'validation_failed',
      fields: { before: [expect.any(String)] },
    });
  });
});
