/**
 * Two auth-server processes behind one issuer, on one PostgreSQL database and one Redis:
 * nothing that decides a redemption, a limit or a signing key may live in one process's
 * memory, so
 *   - 100 concurrent redemptions of one code spread over both: exactly one succeeds;
 *   - a refresh token likewise, with strict rotation (REFRESH_REUSE_INTERVAL=0: with the
 *     reuse interval concurrent presentations are honest retries, docs/security.md);
 *   - a refresh token rotated through one and replayed through the other is reuse;
 *   - a device code polled through one and at once through the other gets slow_down;
 *   - failed sign-ins through either count against one limit;
 *   - a key rotated through one's admin API signs on both once the publish lead is over;
 *   - either instance killed in a refresh storm: every client retries on the other and no
 *     refresh chain is lost, no reuse alert raised (docs/security.md, reuse interval).
 * A small HTTP front stands for the load balancer at the issuer URL. PGlite is one
 * process's database, so this runs only with DATABASE_URL and REDIS_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import {
  browser,
  browserLogin,
  decodeJwt,
  deleteRedisKeys,
  freePort,
  pkceSignIn,
  PUBLIC_SPA_METADATA,
  REDIRECT_URI,
  TEST_API_AUDIENCE as AUDIENCE,
  until,
} from '@portcullis/testing';
import { startService, stopService, waitReady, type Service } from './helpers/processes.js';

const shared = Boolean(process.env['DATABASE_URL'] && process.env['REDIS_URL']);
// Skipped (and reported as skipped) on the embedded database.
const describeShared = shared ? describe : describe.skip;
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const REDIS_KEY_PREFIX = `portcullis-test-${randomBytes(6).toString('hex')}:`;
// Publish before sign, short enough for a test: a rotated key signs two seconds later.
const PUBLISH_LEAD_SECONDS = 2;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Instance extends Service {
  adminUrl: string;
}

let database: TestDatabase;
let dataDir: string;
let a: Instance;
let b: Instance;
let front: Server;
let issuer: string;
let common: Record<string, string>;
/** Every instance started, to stop them all at the end. */
const instances: Instance[] = [];
// The front sends each request to the next live instance in turn.
let turn = 0;
const live = () => [a, b].filter((i) => i.child.exitCode === null && i.child.signalCode === null);

/** Starts one more instance of the issuer on ports of its own; `env` overrides the common. */
async function spawnInstance(name: string, env: Record<string, string> = {}): Promise<Instance> {
  const [port, adminPort] = await Promise.all([freePort(), freePort()]);
  const service = await startService('apps/auth-server/src/main.ts', `http://127.0.0.1:${port}`, {
    ...common,
    AUTH_PORT: String(port),
    ADMIN_PORT: String(adminPort),
    DATA_DIR: path.join(dataDir, name),
    ...env,
  });
  const instance = { ...service, adminUrl: `http://127.0.0.1:${adminPort}` };
  instances.push(instance);
  await waitReady(instance);
  return instance;
}

async function adminOf(
  instance: Instance,
  method: string,
  route: string,
  body?: unknown,
): Promise<Json> {
  const res = await fetch(instance.adminUrl + route, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

const admin = (method: string, route: string, body?: unknown) =>
  adminOf(live()[0]!, method, route, body);

function startFront(port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const targets = live();
    const target = new URL(targets[turn++ % targets.length]!.url);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

async function signedIn() {
  const email = `auth-scale-${randomUUID().slice(0, 8)}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  await admin('POST', '/admin/users', { email, password, roles: ['editor'] });
  const spa = await admin('POST', '/admin/clients', {
    client_id: `spa-${randomUUID().slice(0, 8)}`,
    ...PUBLIC_SPA_METADATA,
  });
  const config = await oidc.discovery(new URL(issuer), spa.client_id, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  return { config, clientId: spa.client_id as string, user: { email, password } };
}

/** One /token request straight to one instance; a dead instance answers `null`. */
async function token(instance: Instance, form: Record<string, string>) {
  try {
    const res = await fetch(`${instance.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, body: (await res.json()) as Json };
  } catch {
    return null;
  }
}

const reuseAudits = async (grantIds: Set<unknown>) => {
  const audit = await admin('GET', '/admin/audit?kind=refresh_token_reuse&limit=100');
  return (audit.items as { grantId: string }[]).filter((e) => grantIds.has(e.grantId)).length;
};

beforeAll(async () => {
  if (!shared) return;
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-auth-scale-'));
  const frontPort = await freePort();
  issuer = `http://127.0.0.1:${frontPort}`;
  common = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.url!,
    REDIS_URL: process.env['REDIS_URL']!,
    REDIS_KEY_PREFIX,
    ISSUER: issuer,
    API_AUDIENCE: AUDIENCE,
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    SIGNING_KEY_PUBLISH_LEAD: String(PUBLISH_LEAD_SECONDS),
    // One issuer: both instances sign cookies and decrypt signing keys alike.
    COOKIE_KEYS: randomBytes(32).toString('base64url'),
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
  };
  // One after the other: the first creates the signing key, the second loads it.
  a = await spawnInstance('a');
  b = await spawnInstance('b');
  front = await startFront(frontPort);
}, 180_000);

afterAll(async () => {
  if (!shared) return;
  await new Promise((r) => front?.close(r));
  await Promise.all(instances.map((i) => stopService(i)));
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
  await deleteRedisKeys(process.env['REDIS_URL']!, REDIS_KEY_PREFIX);
}, 60_000);

/** A signed-in client's refresh token and grant, through the front. */
async function refreshChain() {
  const { config, clientId, user } = await signedIn();
  const tokens = await pkceSignIn(config, user, {
    scope: 'openid offline_access api',
    resource: AUDIENCE,
  });
  return {
    clientId,
    refreshToken: tokens.refresh_token!,
    grantId: decodeJwt(tokens.access_token).payload.grant_id as string,
  };
}

const refresh = (instance: Instance, clientId: string, refreshToken: string) =>
  token(instance, {
    grant_type: 'refresh_token',
    client_id: clientId,
    refresh_token: refreshToken,
  });

/**
 * Eight refresh chains go through `victim` until it is SIGKILLed in the fourth round; a
 * request that got no answer is sent again, with the same refresh token, to `survivor`
 * (what a client behind the balancer does). Returns what failed.
 */
async function refreshStormKilling(victim: Instance, survivor: Instance) {
  const chains = await Promise.all(Array.from({ length: 8 }, () => refreshChain()));
  let killed = false;
  const failures: string[] = [];
  await Promise.all(
    chains.map(async (chain, n) => {
      for (let round = 0; round < 12; round++) {
        if (n === 0 && round === 4 && !killed) {
          killed = true;
          void stopService(victim, 'SIGKILL');
        }
        const answer =
          (await refresh(victim, chain.clientId, chain.refreshToken)) ??
          (await refresh(survivor, chain.clientId, chain.refreshToken));
        if (answer?.status !== 200) {
          failures.push(`${round}: ${answer?.status} ${JSON.stringify(answer?.body)}`);
          return;
        }
        chain.refreshToken = answer.body.refresh_token;
      }
    }),
  );
  expect(killed).toBe(true);
  expect(victim.child.signalCode).toBe('SIGKILL');
  // Every chain still refreshes, on the survivor.
  const after = [];
  for (const chain of chains)
    after.push((await refresh(survivor, chain.clientId, chain.refreshToken))?.status);
  return { failures, after, alerts: await reuseAudits(new Set(chains.map((c) => c.grantId))) };
}

describeShared('scale-out: 2 auth-server processes, one issuer, on PostgreSQL and Redis', () => {
  test('one code, 100 concurrent redemptions spread over both instances: exactly one succeeds', async () => {
    const { config, clientId, user } = await signedIn();
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid offline_access api',
      resource: AUDIENCE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await browserLogin(url.href, user);
    const code = callback.searchParams.get('code')!;
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        token(i % 2 ? a : b, {
          grant_type: 'authorization_code',
          client_id: clientId,
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
        }),
      ),
    );
    expect(results.filter((r) => r?.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x?.status !== 200))
      expect(r?.body.error).toBe('invalid_grant');
  }, 60_000);

  test('one refresh token, 100 concurrent refreshes over both with strict rotation: exactly one succeeds', async () => {
    // A second pair of the same issuer with the reuse interval off (REFRESH_REUSE_INTERVAL=0).
    const strict = { REFRESH_REUSE_INTERVAL: '0' };
    const [c, d] = [await spawnInstance('c', strict), await spawnInstance('d', strict)];
    try {
      const chain = await refreshChain();
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          refresh(i % 2 ? c : d, chain.clientId, chain.refreshToken),
        ),
      );
      expect(results.filter((r) => r?.status === 200)).toHaveLength(1);
      for (const r of results.filter((x) => x?.status !== 200)) {
        expect(r?.status).toBe(400);
        expect(r?.body.error).toBe('invalid_grant');
      }
    } finally {
      await Promise.all([stopService(c), stopService(d)]);
    }
  }, 60_000);

  test('a refresh token rotated through one and replayed through the other after its successor was used: grant revoked, alert', async () => {
    const { config, clientId, user } = await signedIn();
    const tokens = await pkceSignIn(config, user, {
      scope: 'openid offline_access api',
      resource: AUDIENCE,
    });
    const grantId = decodeJwt(tokens.access_token).payload.grant_id;
    const rt = (instance: Instance, refresh_token: string) =>
      token(instance, { grant_type: 'refresh_token', client_id: clientId, refresh_token });
    const second = await rt(a, tokens.refresh_token!);
    const third = await rt(b, second!.body.refresh_token);
    expect(third?.status).toBe(200);
    const replay = await rt(a, tokens.refresh_token!);
    expect(replay?.body.error).toBe('invalid_grant');
    expect((await rt(b, third!.body.refresh_token))?.body.error).toBe('invalid_grant');
    await new Promise((r) => setTimeout(r, 500)); // the alert is written after the answer
    expect(await reuseAudits(new Set([grantId]))).toBe(1);
  }, 60_000);

  test('a device code polled through one and at once through the other: slow_down', async () => {
    const device = await admin('POST', '/admin/clients', {
      client_id: `tv-${randomUUID().slice(0, 8)}`,
      token_endpoint_auth_method: 'none',
      grant_types: ['device_code', 'refresh_token'],
      first_party: true,
    });
    const started = await fetch(`${a.url}/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: device.client_id, scope: 'api' }).toString(),
    });
    const auth = (await started.json()) as Json;
    expect(auth.interval).toBe(5);
    const poll = (instance: Instance) =>
      token(instance, {
        grant_type: DEVICE_GRANT,
        client_id: device.client_id,
        device_code: auth.device_code,
      });
    expect((await poll(a))?.body.error).toBe('authorization_pending');
    const other = await poll(b);
    expect(other?.status).toBe(400);
    expect(other?.body.error).toBe('slow_down');
    expect((await poll(a))?.body.error).toBe('slow_down');
  }, 30_000);

  test('failed sign-ins through either instance count against one limit', async () => {
    const { config, user } = await signedIn();
    const b2 = browser();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid api',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const first = await b2.get(url.href);
    const interaction = new URL(first.headers.get('location')!, issuer).pathname;
    const page = await (await b2.get(`${issuer}${interaction}`)).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const signIn = (instance: Instance, password: string) =>
      b2.postForm(`${instance.url}${interaction}/login`, { csrf, email: user.email, password });
    // Five wrong passwords, three through A and two through B: the account's limit (five).
    for (const instance of [a, b, a, b, a])
      expect((await signIn(instance, `wrong-${randomUUID()}`)).status).toBe(400);
    for (const instance of [b, a]) {
      const limited = await signIn(instance, user.password);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }, 30_000);

  test('a key rotated through one instance signs on both once the publish lead is over', async () => {
    const client = await admin('POST', '/admin/clients', {
      client_id: `svc-${randomUUID().slice(0, 8)}`,
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const kidFrom = async (instance: Instance) => {
      const answer = await token(instance, {
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret,
        resource: AUDIENCE,
      });
      expect(answer?.status).toBe(200);
      return {
        kid: decodeJwt(answer!.body.access_token).header.kid as string,
        jwt: answer!.body.access_token as string,
      };
    };
    const oldKid = (await kidFrom(a)).kid;
    expect((await kidFrom(b)).kid).toBe(oldKid);

    const rotated = await adminOf(a, 'POST', '/admin/signing-keys', {});
    expect(rotated.status).toBe('next');
    const newKid = rotated.kid as string;
    const activatesAt = Date.parse(rotated.activates_at);
    // B publishes it before it signs with it (it reloads keys twice per lead).
    const jwksOfB = async () =>
      ((await (await fetch(`${b.url}/.well-known/jwks.json`)).json()) as Json).keys.map(
        (k: Json) => k.kid,
      );
    expect(
      await until(jwksOfB, (kids) => kids.includes(newKid), PUBLISH_LEAD_SECONDS * 1000),
    ).toContain(newKid);

    // Both sign with it soon after activation (a second of margin for a loaded machine).
    const margin = activatesAt - Date.now() + 3000;
    for (const instance of [a, b]) {
      const signed = await until(
        () => kidFrom(instance),
        (t) => t.kid === newKid,
        margin,
      );
      expect(signed.kid).toBe(newKid);
      // What B signed verifies with the key set A publishes, and the other way round.
      const other = instance === a ? b : a;
      const jwks = createRemoteJWKSet(new URL(`${other.url}/.well-known/jwks.json`));
      await expect(
        jwtVerify(signed.jwt, jwks, { issuer, audience: AUDIENCE }),
      ).resolves.toBeDefined();
    }
    expect(Date.now()).toBeGreaterThanOrEqual(activatesAt);
  }, 30_000);

  test('B killed in a refresh storm: every chain goes on through A, no reuse alert', async () => {
    const { failures, after, alerts } = await refreshStormKilling(b, a);
    expect(failures).toEqual([]);
    expect(after.every((status) => status === 200)).toBe(true);
    expect(alerts).toBe(0);
    b = await spawnInstance('b2');
  }, 120_000);

  test('A killed in a refresh storm: every chain goes on through B, no reuse alert', async () => {
    const { failures, after, alerts } = await refreshStormKilling(a, b);
    expect(failures).toEqual([]);
    expect(after.every((status) => status === 200)).toBe(true);
    expect(alerts).toBe(0);
  }, 120_000);
});
