/**
 * Logs and metrics of both programs, driven through a full flow: client credentials, a
 * PKCE sign-in with a password (and a refresh), API calls with a bearer token, a `sid`
 * session and an API key. Every log line of both apps, at debug, goes through the
 * project's logger factory into memory; no credential may appear in it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RunningAuthServer } from '@portcullis/auth-server';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { createLogger } from '@portcullis/observability';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  CookieJar,
  REDIRECT_URI,
  TEST_API_AUDIENCE as API_AUDIENCE,
} from '@portcullis/testing';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../src/index.js';

const ADMIN_TOKEN = randomBytes(32).toString('base64url');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Every Set-Cookie value the browser received, besides keeping them as a browser would. */
class RecordingJar extends CookieJar {
  readonly values: string[] = [];
  override store(res: Response): void {
    for (const header of res.headers.getSetCookie()) {
      const pair = header.split(';')[0] ?? '';
      const value = pair.slice(pair.indexOf('=') + 1);
      if (value.length >= 8) this.values.push(value);
    }
    super.store(res);
  }
}

let database: TestDatabase;
let dataDir: string;
let testAuth: TestAuthServer;
let auth: RunningAuthServer;
let api: RunningApiServer;
let output = '';

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-obs-'));
  const sink = new Writable({
    write(chunk, _encoding, done) {
      output += String(chunk);
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination: sink });
  testAuth = await startTestAuthServer(
    { ADMIN_TOKEN },
    { db: database.db, logger: logger.child({ app: 'auth-server' }) },
  );
  auth = testAuth.server;
  api = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: '0',
      ISSUER: auth.issuer,
      API_AUDIENCE,
      DATA_DIR: dataDir,
      LOGIN_ACCOUNT_LIMIT: '2',
      // The flow below makes an API key with a password session: no step-up sign-in here
      // (as in the harness with the real auth server, helpers/harness.ts).
      STEP_UP: 'off',
    }),
    { db: database.db, logger: logger.child({ app: 'api' }) },
  );
});

afterAll(async () => {
  await api?.close();
  await testAuth?.close();
  await database?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function admin(method: string, pathname: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${auth.adminUrl}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Json;
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function call(pathname: string, init: RequestInit = {}) {
  const res = await fetch(`${api.url}${pathname}`, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (text ? JSON.parse(text) : null) as Json,
  };
}

const bearer = (token: string, extra: Record<string, string> = {}) => ({
  headers: { authorization: `Bearer ${token}`, ...extra },
});

const discover = (clientId: string, secret?: string) =>
  oidc.discovery(
    new URL(auth.issuer),
    clientId,
    secret,
    secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  );

/** The value of `name{labels}` in a Prometheus text exposition, or 0 when absent. */
async function metric(base: string, series: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('logs and metrics of both apps', () => {
  test('a full flow logged at debug writes no token, key, session, cookie, password or secret', async () => {
    const secrets: Record<string, string> = { adminToken: ADMIN_TOKEN };

    // Client credentials.
    const service = await admin('POST', '/admin/clients', {
      client_id: `svc-${randomUUID().slice(0, 8)}`,
      grant_types: ['client_credentials'],
      roles: ['admin'],
    });
    secrets['clientSecret'] = service.client_secret;
    const cc = await oidc.clientCredentialsGrant(
      await discover(service.client_id, service.client_secret),
      { scope: 'api' },
    );
    secrets['ccAccessToken'] = cc.access_token;
    expect((await call('/orders', bearer(cc.access_token))).status).toBe(200);
    // A refused token is logged with its reason, never with the token.
    expect((await call('/orders', bearer(`${cc.access_token}x`))).status).toBe(401);

    // PKCE sign-in with a password, then a refresh.
    const email = `obs-${randomUUID().slice(0, 8)}@example.com`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    secrets['password'] = password;
    await admin('POST', '/admin/users', { email, password, roles: ['admin'] });
    const spa = await admin('POST', '/admin/clients', {
      client_id: `spa-${randomUUID().slice(0, 8)}`,
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      first_party: true,
    });
    const config = await discover(spa.client_id);
    const verifier = oidc.randomPKCECodeVerifier();
    secrets['codeVerifier'] = verifier;
    const jar = new RecordingJar();
    // A wrong password first: the failed-login path logs too.
    const start = (state: string) =>
      oidc.calculatePKCECodeChallenge(verifier).then((challenge) =>
        oidc.buildAuthorizationUrl(config, {
          redirect_uri: REDIRECT_URI,
          scope: 'openid offline_access api',
          resource: API_AUDIENCE,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state,
        }),
      );
    await expect(
      browserLogin(
        (await start(oidc.randomState())).href,
        { email, password: `${password}-wrong` },
        {
          b: browser(jar),
        },
      ),
    ).rejects.toThrow(/400/);
    const state = oidc.randomState();
    const callback = await browserLogin(
      (await start(state)).href,
      { email, password },
      {
        b: browser(jar),
      },
    );
    secrets['code'] = callback.searchParams.get('code')!;
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    secrets['userAccessToken'] = tokens.access_token;
    secrets['refreshToken'] = tokens.refresh_token!;
    secrets['idToken'] = tokens.id_token!;
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    secrets['rotatedRefreshToken'] = refreshed.refresh_token!;
    expect((await call('/orders', bearer(refreshed.access_token))).status).toBe(200);
    // The client uses its successor: from then on the first token is stale for good (a replay
    // inside REFRESH_REUSE_INTERVAL before that would be an honest retry).
    secrets['secondRefreshToken'] = (
      await oidc.refreshTokenGrant(config, refreshed.refresh_token!)
    ).refresh_token!;
    jar.values.forEach((value, i) => (secrets[`authCookie${i}`] = value));

    // A session at the API (POST /login with the password), then an API key made with it.
    const login = await fetch(`${api.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(API_AUDIENCE).origin },
      body: JSON.stringify({ email, password }),
    });
    expect(login.status).toBe(200);
    const sid = /sid=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
    secrets['sid'] = sid;
    const key = await call('/api-keys', {
      method: 'POST',
      headers: {
        cookie: `sid=${sid}`,
        'content-type': 'application/json',
        origin: new URL(API_AUDIENCE).origin,
      },
      body: JSON.stringify({ name: 'observability test', permissions: ['orders:read'] }),
    });
    expect(key.status).toBe(201);
    secrets['apiKey'] = key.body.key;
    expect(secrets['apiKey']).toMatch(/^sk_live_/);
    expect((await call('/orders', bearer(secrets['apiKey']!))).status).toBe(200);
    // Wrong passwords at the API, until its account limit refuses (429).
    for (let i = 0; i < 3; i++) {
      await fetch(`${api.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: new URL(API_AUDIENCE).origin },
        body: JSON.stringify({ email, password: `${password}-${i}` }),
      });
    }
    // Reuse of the rotated refresh token: revocation and an alert at error level.
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toThrow();
    await auth.settle();

    // The request id is echoed (and carried by each line of the request); probes log at debug.
    const echoed = await call('/healthz', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-abc.123');
    const insane = await call('/healthz', { headers: { 'x-request-id': 'a b"c' } });
    expect(insane.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(output).toContain('"reqId":"trace-abc.123"');
    expect(output).toContain('"msg":"request"');
    expect(output).toContain('"level":20'); // debug lines were captured too
    for (const [name, value] of Object.entries(secrets)) {
      expect(value.length).toBeGreaterThan(7);
      if (output.includes(value)) throw new Error(`${name} appears in the log output`);
    }
  });

  test('API /metrics counts requests by route template, rate-limit rejections and the deny list', async () => {
    const series = (route: string, status: string) =>
      `http_requests_total{method="GET",route="${route}",status="${status}"}`;
    const before = await metric(api.url, series('/orders/:id', '401'));
    const id = randomUUID();
    await call(`/orders/${id}`);
    await call(`/orders/${randomUUID()}`);
    await call('/no-such-path');
    expect(await metric(api.url, series('/orders/:id', '401'))).toBe(before + 2);
    expect(await metric(api.url, series('unmatched', '404'))).toBeGreaterThanOrEqual(1);
    const text = await (await fetch(`${api.url}/metrics`)).text();
    expect(text).not.toContain(id);
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0\.1",method="GET",route="\/orders\/:id",status="401"\}/,
    );
    expect(
      await metric(api.url, 'rate_limit_rejections_total{limiter="loginAccount"}'),
    ).toBeGreaterThanOrEqual(1);
    // The reuse in the first test revoked a grant: the API's list holds it.
    expect(text).toMatch(/^deny_list_entries \d+/m);
  });

  test('auth-server /metrics counts tokens by grant type, refresh reuse and routes', async () => {
    const service = await admin('POST', '/admin/clients', {
      client_id: `svc-${randomUUID().slice(0, 8)}`,
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const issued = 'oauth_tokens_issued_total{grant_type="client_credentials"}';
    const before = await metric(auth.url, issued);
    const config = await discover(service.client_id, service.client_secret);
    await oidc.clientCredentialsGrant(config, { scope: 'api' });
    await oidc.clientCredentialsGrant(config, { scope: 'api' });
    expect(await metric(auth.url, issued)).toBe(before + 2);
    expect(
      await metric(auth.url, 'oauth_tokens_issued_total{grant_type="authorization_code"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await metric(auth.url, 'oauth_tokens_issued_total{grant_type="refresh_token"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(await metric(auth.url, 'oauth_refresh_reuse_detected_total')).toBeGreaterThanOrEqual(1);
    expect(
      await metric(auth.url, 'http_requests_total{method="POST",route="/token",status="200"}'),
    ).toBeGreaterThanOrEqual(2);
    const text = await (await fetch(`${auth.url}/metrics`)).text();
    expect(text).toContain('route="/interaction/:uid"');
    expect(text).not.toMatch(/route="\/interaction\/[A-Za-z0-9_-]{10,}/);
  });
});
