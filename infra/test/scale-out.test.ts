/**
 * Scale-out: one auth-server process and two API processes — real `main.ts` entry points,
 * separate Node processes — on one PostgreSQL database and one Redis. Nothing that must
 * be shared may live in one process's memory, so:
 *   - an event produced through API A reaches an SSE stream on API B;
 *   - a logout-everywhere through API A makes API B refuse the user's token within 1 s;
 *   - failed-login limits hold across both instances.
 * PGlite is one process's database, so this runs only with DATABASE_URL and REDIS_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import {
  deleteRedisKeys,
  freePort,
  pkceSignIn,
  PUBLIC_SPA_METADATA,
  TEST_API_AUDIENCE as AUDIENCE,
  until,
} from '@portcullis/testing';
import { startService, stopService, waitReady, type Service } from './helpers/processes.js';

const shared = Boolean(process.env['DATABASE_URL'] && process.env['REDIS_URL']);
// Skipped (and reported as skipped) on the embedded database.
const describeShared = shared ? describe : describe.skip;
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
// Redis is shared by every test run on the machine: this run's keys carry their own prefix
// and are deleted afterwards, as its database is.
const REDIS_KEY_PREFIX = `portcullis-test-${randomBytes(6).toString('hex')}:`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let database: TestDatabase;
let dataDir: string;
let auth: Service;
let apiA: Service;
let apiB: Service;
let adminUrl: string;

async function admin(method: string, route: string, body?: unknown): Promise<Json> {
  const res = await fetch(adminUrl + route, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

const discover = (clientId: string, secret?: string) =>
  oidc.discovery(
    new URL(auth.url),
    clientId,
    secret,
    secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  );

async function newUser(roles: string[]) {
  const email = `scale-${randomUUID().slice(0, 8)}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const user = (await admin('POST', '/admin/users', { email, password, roles })) as { id: string };
  return { ...user, email, password };
}

async function userToken(user: { email: string; password: string }) {
  const spa = await admin('POST', '/admin/clients', {
    client_id: `spa-${randomUUID().slice(0, 8)}`,
    ...PUBLIC_SPA_METADATA,
  });
  const config = await discover(spa.client_id);
  const tokens = await pkceSignIn(config, user, {
    scope: 'openid offline_access api',
    resource: AUDIENCE,
  });
  return { config, tokens };
}

beforeAll(async () => {
  if (!shared) return;
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-scale-'));
  const [authPort, adminPort, portA, portB] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const common = {
    DATABASE_URL: database.url!,
    REDIS_URL: process.env['REDIS_URL']!,
    ISSUER: `http://127.0.0.1:${authPort}`,
    API_AUDIENCE: AUDIENCE,
    REDIS_KEY_PREFIX,
  };
  adminUrl = `http://127.0.0.1:${adminPort}`;
  auth = await startService('apps/auth-server/src/main.ts', common.ISSUER, {
    ...common,
    AUTH_PORT: String(authPort),
    ADMIN_PORT: String(adminPort),
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    DATA_DIR: path.join(dataDir, 'auth'),
  });
  await waitReady(auth);
  const apiEnv = (port: number, name: string) => ({
    ...common,
    API_PORT: String(port),
    DATA_DIR: path.join(dataDir, name),
    LOGIN_ACCOUNT_LIMIT: '3',
  });
  [apiA, apiB] = await Promise.all([
    startService('apps/api/src/main.ts', `http://127.0.0.1:${portA}`, apiEnv(portA, 'a')),
    startService('apps/api/src/main.ts', `http://127.0.0.1:${portB}`, apiEnv(portB, 'b')),
  ]);
  await Promise.all([waitReady(apiA), waitReady(apiB)]);
}, 120_000);

afterAll(async () => {
  if (!shared) return;
  await Promise.all([auth, apiA, apiB].filter(Boolean).map((service) => stopService(service)));
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
  await deleteRedisKeys(process.env['REDIS_URL']!, REDIS_KEY_PREFIX);
}, 60_000);

describeShared('scale-out: 1 auth-server + 2 API processes on PostgreSQL and Redis', () => {
  test('an order created through API A reaches a /stream opened on API B', async () => {
    const service = await admin('POST', '/admin/clients', {
      client_id: `svc-${randomUUID().slice(0, 8)}`,
      grant_types: ['client_credentials'],
      roles: ['admin'],
    });
    const cc = await oidc.clientCredentialsGrant(
      await discover(service.client_id, service.client_secret),
      { scope: 'api', resource: AUDIENCE },
    );
    const authorization = `Bearer ${cc.access_token}`;
    const abort = new AbortController();
    const stream = await fetch(`${apiB.url}/stream`, {
      headers: { authorization, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();

    const created = await fetch(`${apiA.url}/orders`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ customer: 'Scale Ltd', amount: 4200, currency: 'EUR' }),
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { id: string };

    let received = '';
    const deadline = Date.now() + 10_000;
    while (!received.includes(order.id) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    abort.abort();
    expect(received).toContain('order.created');
    expect(received).toContain(order.id);
  }, 60_000);

  test("a logout-everywhere through API A makes API B refuse the user's token", async () => {
    const user = await newUser(['editor']);
    const { config, tokens } = await userToken(user);
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    expect((await fetch(`${apiB.url}/orders`, { headers: bearer })).status).toBe(200);

    const logout = await fetch(`${apiA.url}/logout/all`, { method: 'POST', headers: bearer });
    expect(logout.status).toBe(204);
    // B learns of it by its own poll of the shared table.
    const status = await until(
      async () => (await fetch(`${apiB.url}/orders`, { headers: bearer })).status,
      (s) => s === 401,
      20_000,
    );
    expect(status).toBe(401);
    // The auth server, a third process, refuses the grant's refresh token too.
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  }, 60_000);

  test('failed-login limits hold across both API instances (Redis)', async () => {
    const user = await newUser(['viewer']);
    const attempt = (api: Service) =>
      fetch(`${api.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email, password: 'wrong password' }),
      }).then((r) => r.status);
    // LOGIN_ACCOUNT_LIMIT is 3: three failures, whichever instance saw them, then 429.
    const statuses = [await attempt(apiA), await attempt(apiB), await attempt(apiA)];
    expect(statuses).toEqual([401, 401, 401]);
    expect(await attempt(apiB)).toBe(429);
    expect(await attempt(apiA)).toBe(429);
  }, 60_000);
});
