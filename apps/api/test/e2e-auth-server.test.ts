/**
 * Both programs end to end: the REAL authorization server (`startTestAuthServer`) and the API
 * (`startApiServer`) on one test database, driven with openid-client and fetch.
 *
 * The auth server gets a deny list with a bus of its own, so its revocations reach the
 * API the way they reach another instance: through the `revocations` table and the API's
 * 250 ms poll, not through the in-process shortcut.
 */
import { createDecipheriv, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RunningAuthServer } from '@portcullis/auth-server';
import { ACR } from '@portcullis/claims';
import { createSharedDenyList, type SharedDenyList } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { importJWK, SignJWT, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { pino } from 'pino';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  accountSignIn,
  browser,
  createUser,
  enrolTotp,
  pkceSignIn,
  PUBLIC_SPA_METADATA,
  rethrow,
  startMailbox,
  TEST_API_AUDIENCE as API_AUDIENCE,
  type Mailbox,
  until,
} from '@portcullis/testing';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../src/index.js';

const KEY_ENCRYPTION_KEY = randomBytes(32).toString('base64url');
const PUBLISH_LEAD_SECONDS = 2;
/** A client-credentials token narrows its roles to the scope: `api` keeps them all. */
const API = { scope: 'api' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let database: TestDatabase;
let dataDir: string;
let testAuth: TestAuthServer;
let auth: RunningAuthServer;
let authDenyList: SharedDenyList;
let api: RunningApiServer;
let mailbox: Mailbox;
/** The API's clock runs this far ahead: lets a test move past its JWKS refetch cooldown. */
let apiClockSkewMs = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-e2e-api-'));
  const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  authDenyList = createSharedDenyList({
    db: database.db,
    onError: rethrow,
    bus: new EventEmitter(),
  });
  await authDenyList.start();
  mailbox = await startMailbox();
  testAuth = await startTestAuthServer(
    {
      KEY_ENCRYPTION_KEY,
      SIGNING_KEY_PUBLISH_LEAD: String(PUBLISH_LEAD_SECONDS),
      SMTP_URL: mailbox.url,
    },
    { db: database.db, logger, denyList: authDenyList },
  );
  auth = testAuth.server;
  // The issuer is the bound URL (port 0), so the API is configured after the auth server.
  api = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: '0',
      ISSUER: auth.issuer,
      API_AUDIENCE,
      DATA_DIR: dataDir,
    }),
    { db: database.db, logger, now: () => Date.now() + apiClockSkewMs },
  );
});

afterAll(async () => {
  await api?.close();
  await testAuth?.close();
  await authDenyList?.close();
  await mailbox?.close();
  await database?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function admin(method: string, pathname: string, body?: unknown): Promise<Json> {
  const { status, body: json } = await testAuth.admin(method, pathname, body);
  if (status >= 400) throw new Error(`${method} ${pathname}: ${status} ${JSON.stringify(json)}`);
  return json;
}

async function callApi(method: string, pathname: string, token: string, body?: unknown) {
  const res = await fetch(`${api.url}${pathname}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (text ? JSON.parse(text) : null) as Json,
  };
}

const discover = (clientId: string, secret?: string) =>
  oidc.discovery(
    new URL(auth.issuer),
    clientId,
    secret,
    secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  );

const header = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as Record<string, string>;
const claims = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

async function serviceClient(roles: string[]) {
  const client = await admin('POST', '/admin/clients', {
    client_id: `svc-${randomUUID().slice(0, 8)}`,
    grant_types: ['client_credentials'],
    roles,
  });
  return discover(client.client_id, client.client_secret);
}

/** A user signed in through a real PKCE flow (login form, first-party client: no consent). */
async function userSignIn(roles = ['editor']) {
  const email = `e2e-${randomUUID().slice(0, 8)}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const user = await admin('POST', '/admin/users', { email, password, roles });
  const spa = await admin('POST', '/admin/clients', {
    client_id: `spa-${randomUUID().slice(0, 8)}`,
    ...PUBLIC_SPA_METADATA,
  });
  const config = await discover(spa.client_id);
  const tokens = await pkceSignIn(
    config,
    { email, password },
    { scope: 'openid offline_access api', resource: API_AUDIENCE },
  );
  return { user: user as { id: string }, config, tokens };
}

/** The API's answer once it is `status` (its deny list learns by its own poll of the table). */
async function statusOnceIt(probe: () => Promise<{ status: number }>, status: number) {
  return until(
    async () => (await probe()).status,
    (s) => s === status,
    20_000,
  );
}

describe('auth server and API end to end', () => {
  test('(a) client-credentials and PKCE user tokens are accepted; the order belongs to the user', async () => {
    const service = await serviceClient(['admin']);
    const cc = await oidc.clientCredentialsGrant(service, { scope: 'api' });
    const listed = await callApi('GET', '/orders', cc.access_token);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ items: expect.any(Array), page: 1 });

    const { user, tokens } = await userSignIn(['editor']);
    expect(claims(tokens.access_token)).toMatchObject({ aud: API_AUDIENCE, sub: user.id });
    const created = await callApi('POST', '/orders', tokens.access_token, {
      customer: 'ACME Corp',
      amount: 1999,
      currency: 'EUR',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ userId: user.id, status: 'pending' });
    // The admin service sees it too.
    const again = await callApi('GET', `/orders/${created.body.id}`, cc.access_token);
    expect(again.status).toBe(200);
  });

  test('(b) refresh-token reuse revokes the grant; the API refuses its access token', async () => {
    const { config, tokens } = await userSignIn();
    expect((await callApi('GET', '/orders', tokens.access_token)).status).toBe(200);
    const first = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    // The client uses its successor: from then on the first token is stale for good (a replay
    // inside REFRESH_REUSE_INTERVAL before that would be an honest retry).
    const rotated = await oidc.refreshTokenGrant(config, first.refresh_token!);
    expect((await callApi('GET', '/orders', rotated.access_token)).status).toBe(200);

    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await statusOnceIt(() => callApi('GET', '/orders', rotated.access_token), 401)).toBe(
      401,
    );
    const refused = await callApi('GET', '/orders', rotated.access_token);
    expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    // Every token of the grant is gone at the auth server too.
    await expect(oidc.refreshTokenGrant(config, rotated.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  test('(c) revoking a refresh token revokes its grant; the API refuses its access token', async () => {
    const { config, tokens } = await userSignIn();
    expect((await callApi('GET', '/orders', tokens.access_token)).status).toBe(200);
    await oidc.tokenRevocation(config, tokens.refresh_token!, {
      token_type_hint: 'refresh_token',
    });
    expect(await statusOnceIt(() => callApi('GET', '/orders', tokens.access_token), 401)).toBe(401);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  test('(d) key rotation: the API accepts the new kid after refetching; old tokens keep working', async () => {
    const service = await serviceClient(['viewer']);
    const oldToken = (await oidc.clientCredentialsGrant(service, API)).access_token;
    const oldKid = header(oldToken)['kid'];
    // The API verifies (and so caches the JWKS) before the rotation.
    expect((await callApi('GET', '/orders', oldToken)).status).toBe(200);

    const rotated = await admin('POST', '/admin/signing-keys', {});
    expect(rotated).toMatchObject({ status: 'next' });
    const jwks = (await (await fetch(`${auth.issuer}/.well-known/jwks.json`)).json()) as Json;
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual(
      expect.arrayContaining([oldKid, rotated.kid]),
    );
    expect(header((await oidc.clientCredentialsGrant(service, API)).access_token)['kid']).toBe(
      oldKid,
    );

    let newToken = '';
    const deadline = Date.now() + PUBLISH_LEAD_SECONDS * 1000 + 3000;
    while (Date.now() < deadline) {
      newToken = (await oidc.clientCredentialsGrant(service, API)).access_token;
      if (header(newToken)['kid'] === rotated.kid) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(header(newToken)['kid']).toBe(rotated.kid);

    // This test compresses the lead to 2 s, so the API's last JWKS fetch is still inside
    // its 30 s unknown-kid cooldown: it has only the old JWKS and refuses the new kid.
    // That is why the default lead (60 s) is at least reload interval + cooldown.
    expect((await callApi('GET', '/orders', newToken)).status).toBe(401);
    // 31 s later on the API's clock, as a real 60 s lead guarantees, it refetches once.
    apiClockSkewMs = 31_000;
    expect((await callApi('GET', '/orders', newToken)).status).toBe(200);
    expect((await callApi('GET', '/orders', oldToken)).status).toBe(200);
  });

  test('(e) another audience or a foreign key is refused 401 invalid_token', async () => {
    const service = await serviceClient(['admin']);
    const real = (await oidc.clientCredentialsGrant(service, API)).access_token;
    const { kid } = header(real);
    const payload = claims(real);

    // Signed with the auth server's own current key, for another audience.
    const row = await database.db('signing_keys').where({ kid }).first();
    const ownKey = await importJWK(openSealedJwk(kid!, row.private_jwk_enc), 'RS256');
    const otherAudience = await new SignJWT({ ...payload, aud: 'https://other-api.example' })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: kid! })
      .sign(ownKey);
    // A foreign key, once under the real kid and once under its own.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forge = (k: string) =>
      new SignJWT(payload)
        .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: k })
        .sign(privateKey);

    for (const token of [otherAudience, await forge(kid!), await forge('foreign-kid')]) {
      const res = await callApi('GET', '/orders', token);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    }
    expect((await callApi('GET', '/orders', real)).status).toBe(200);
  });
});

/**
 * Reads a private signing key as the auth server stores it (AES-256-GCM, kid as AAD; see
 * apps/auth-server data/signing-keys-repo.ts), to mint a token that differs from a real
 * one only in its audience.
 */
function openSealedJwk(kid: string, sealed: string): JWK {
  const [, iv, ct, tag] = sealed.split('.');
  const decipher = createDecipheriv(
    'aes-256-gcm',
    Buffer.from(KEY_ENCRYPTION_KEY, 'base64url'),
    Buffer.from(iv!, 'base64url'),
  )
    .setAAD(Buffer.from(kid))
    .setAuthTag(Buffer.from(tag!, 'base64url'));
  const clear = Buffer.concat([decipher.update(Buffer.from(ct!, 'base64url')), decipher.final()]);
  return JSON.parse(clear.toString('utf8')) as JWK;
}

describe('a second factor guards every door that takes a password', () => {
  const apiLogin = (email: string, password: string) =>
    fetch(`${api.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });

  test("POST /login opens no session for an account with the auth server's app or passkey", async () => {
    const user = await createUser(testAuth);
    // Before any factor (and with an enrolment only started), the password signs in.
    const plain = await apiLogin(user.email, user.password);
    expect(plain.status).toBe(200);
    expect(plain.headers.getSetCookie().some((c) => c.startsWith('sid='))).toBe(true);

    await enrolTotp(testAuth, browser(), user);
    const refused = await apiLogin(user.email, user.password);
    expect(refused.status).toBe(401);
    expect(refused.headers.getSetCookie()).toEqual([]);
    expect(await refused.json()).toEqual({
      error: 'second_factor_required',
      message: expect.stringContaining('sign in at the auth server'),
    });
    expect(refused.headers.get('www-authenticate')).toContain(
      'error="insufficient_user_authentication"',
    );
    expect(refused.headers.get('www-authenticate')).toContain(`acr_values="${ACR.mfa}"`);
    // A wrong password still says only that.
    expect(await (await apiLogin(user.email, `${user.password}x`)).json()).toMatchObject({
      error: 'invalid_credentials',
    });

    // A passkey alone (no app) is a second factor too; removing every factor opens the door.
    await admin('DELETE', `/admin/users/${user.id}/factors`);
    expect((await apiLogin(user.email, user.password)).status).toBe(200);
    await database.db('passkeys').insert({
      id: randomBytes(16).toString('base64url'),
      user_id: user.id,
      name: 'Key',
      public_key: randomBytes(77),
      device_type: 'singleDevice',
      backed_up: false,
    });
    expect((await admin('GET', `/admin/users/${user.id}/factors`)).items).toHaveLength(1);
    expect((await apiLogin(user.email, user.password)).status).toBe(401);
  });
});

describe('the account\'s people and administrators end access: the API follows (README "Your account")', () => {
  test('(f) a disabled user: the API refuses their access token after its deny-list poll', async () => {
    const { user, tokens } = await userSignIn();
    expect((await callApi('GET', '/orders', tokens.access_token)).status).toBe(200);
    await admin('POST', `/admin/users/${user.id}/disable`);
    expect(await statusOnceIt(() => callApi('GET', '/orders', tokens.access_token), 401)).toBe(401);
  });

  test("(g) an app's access removed on the account page: the API refuses its access token", async () => {
    const email = `e2e-${randomUUID().slice(0, 8)}@example.com`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    await admin('POST', '/admin/users', { email, password, roles: ['editor'] });
    const spa = await admin('POST', '/admin/clients', {
      client_id: `spa-${randomUUID().slice(0, 8)}`,
      ...PUBLIC_SPA_METADATA,
    });
    const tokens = await pkceSignIn(
      await discover(spa.client_id),
      { email, password },
      { scope: 'openid offline_access api', resource: API_AUDIENCE },
    );
    expect((await callApi('GET', '/orders', tokens.access_token)).status).toBe(200);
    const b = browser();
    const account = await accountSignIn(testAuth, b, { email, password });
    const csrf = /name="csrf" value="([^"]+)"/.exec(account)![1]!;
    const page = await (await b.get(`${auth.issuer}/account/sessions`)).text();
    const grant = /name="grant" value="([^"]+)"/.exec(page)![1]!;
    const revoked = await b.postForm(`${auth.issuer}/account/apps/revoke`, { csrf, grant });
    expect(revoked.status).toBe(200);
    expect(await statusOnceIt(() => callApi('GET', '/orders', tokens.access_token), 401)).toBe(401);
  });

  test('(h) a closed account: its tokens stop at the API; its orders stay, owned by a tombstone', async () => {
    const email = `e2e-${randomUUID().slice(0, 8)}@example.com`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const user = await admin('POST', '/admin/users', { email, password, roles: ['editor'] });
    const spa = await admin('POST', '/admin/clients', {
      client_id: `spa-${randomUUID().slice(0, 8)}`,
      ...PUBLIC_SPA_METADATA,
    });
    const tokens = await pkceSignIn(
      await discover(spa.client_id),
      { email, password },
      { scope: 'openid offline_access api', resource: API_AUDIENCE },
    );
    const order = await callApi('POST', '/orders', tokens.access_token, {
      customer: 'ACME Corp',
      amount: 1999,
      currency: 'EUR',
    });
    expect(order.body).toMatchObject({ userId: user.id });

    const b = browser();
    const account = await accountSignIn(testAuth, b, { email, password });
    const csrf = /name="csrf" value="([^"]+)"/.exec(account)![1]!;
    const closed = await b.postForm(`${auth.issuer}/account/close`, { csrf, confirm_email: email });
    expect(closed.status).toBe(200);
    expect(await statusOnceIt(() => callApi('GET', '/orders', tokens.access_token), 401)).toBe(401);

    const service = await serviceClient(['admin']);
    const cc = await oidc.clientCredentialsGrant(service, API);
    const kept = await callApi('GET', `/orders/${order.body.id}`, cc.access_token);
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ amount: 1999, userId: expect.stringMatching(/^closed:/) });
  });
});

/** A `sid` session at the API (POST /login), and a probe of it. */
async function apiSession(email: string, password: string) {
  const login = await fetch(`${api.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(login.status).toBe(200);
  const sid = /^sid=([^;]+)/.exec(
    login.headers.getSetCookie().find((c) => c.startsWith('sid='))!,
  )![1]!;
  return () => fetch(`${api.url}/orders`, { headers: { cookie: `sid=${sid}` } });
}

/** Refused within the deny list's usual lag (a 250 ms poll), and still 2 s later. */
async function endsSoon(probe: () => Promise<Response>) {
  expect(
    await until(
      async () => (await probe()).status,
      (s) => s === 401,
      3000,
    ),
  ).toBe(401);
  await new Promise((r) => setTimeout(r, 2000));
  expect((await probe()).status).toBe(401);
}

/** Each door, done at `authOf()`, ends a `sid` session the API opened before it. */
function recoveryEndsApiSessions(authOf: () => TestAuthServer) {
  beforeAll(() => {
    // Both clocks agree here (test (d) moved the API's): a session's start is the API's time.
    apiClockSkewMs = 0;
  });
  const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

  test('a password reset by the mailed link ends the sid session', async () => {
    const user = await createUser(authOf());
    const probe = await apiSession(user.email, user.password);
    expect((await probe()).status).toBe(200);
    const b = browser();
    const form = await (await b.get(`${authOf().issuer}/password/forgot`)).text();
    await b.postForm(`${authOf().issuer}/password/forgot`, {
      csrf: csrfOf(form),
      email: user.email,
    });
    const link = (await mailbox.next(user.email)).links.find((l) =>
      l.includes('/password/reset?'),
    )!;
    const resetForm = await (await b.get(link)).text();
    const done = await b.postForm(`${authOf().issuer}/password/reset`, {
      csrf: csrfOf(resetForm),
      token: /name="token" value="([^"]+)"/.exec(resetForm)![1]!,
      password: 'a new password, long enough',
    });
    expect(done.status).toBe(200);
    await endsSoon(probe);
  });

  test('a password change on /account/password ends the sid session', async () => {
    const user = await createUser(authOf());
    const probe = await apiSession(user.email, user.password);
    expect((await probe()).status).toBe(200);
    const b = browser();
    const account = await accountSignIn(authOf(), b, user);
    const changed = await b.postForm(`${authOf().issuer}/account/password`, {
      csrf: csrfOf(account),
      current_password: user.password,
      new_password: 'a new password, long enough',
    });
    expect(changed.status).toBe(200);
    await endsSoon(probe);
  });

  test("an administrator's forced reset ends the sid session", async () => {
    const user = await createUser(authOf());
    const probe = await apiSession(user.email, user.password);
    expect((await probe()).status).toBe(200);
    expect((await authOf().admin('POST', `/admin/users/${user.id}/password-reset`)).status).toBe(
      200,
    );
    await endsSoon(probe);
  });

  test('a session opened after the reset works', async () => {
    const user = await createUser(authOf());
    await authOf().admin('POST', `/admin/users/${user.id}/password`, {
      password: 'another password, long enough',
    });
    await new Promise((r) => setTimeout(r, 50));
    const probe = await apiSession(user.email, 'another password, long enough');
    expect((await probe()).status).toBe(200);
  });
}

describe("a recovery ends the API's sid sessions, written from another process", () => {
  recoveryEndsApiSessions(() => testAuth);
});

// As `npm start` runs both programs: one database handle, so the deny lists share a bus.
describe("a recovery ends the API's sid sessions, written in the API's own process", () => {
  let sameProcess: TestAuthServer | undefined;
  beforeAll(async () => {
    sameProcess = await testAuth.startInstance({}, { denyList: undefined });
  });
  afterAll(async () => {
    await sameProcess?.close();
  });
  recoveryEndsApiSessions(() => sameProcess!);
});
