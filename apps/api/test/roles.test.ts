/**
 * Roles as data at the API (docs/roles.md): a role added through the admin API, given to a
 * user, lets the user's token through a route needing its permission on two API instances,
 * neither restarted; taking the permission away, or deleting the role, refuses the same token
 * within the poll. Both instances learn it from the `roles` table, not from each other.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { BUILT_IN_RESOURCE_ID, createResourceStore } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { pino } from 'pino';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { discover, pkceSignIn, publicSpa, TEST_API_AUDIENCE, until } from '@portcullis/testing';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../src/index.js';
import { PERMISSIONS } from '../src/permissions.js';

let database: TestDatabase;
let dataDir: string;
let auth: TestAuthServer;
let apis: RunningApiServer[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-roles-api-'));
  const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  auth = await startTestAuthServer({}, { db: database.db, logger });
  const config = parseApiConfig({
    NODE_ENV: 'test',
    API_PORT: '0',
    ISSUER: auth.issuer,
    API_AUDIENCE: TEST_API_AUDIENCE,
    DATA_DIR: dataDir,
    STEP_UP: 'off',
  });
  apis = [
    await startApiServer(config, { db: database.db, logger }),
    await startApiServer(config, { db: database.db, logger }),
  ];
});

afterAll(async () => {
  for (const api of apis) await api.close();
  await auth?.close();
  await database?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function admin(method: string, pathname: string, body?: unknown) {
  const res = await auth.admin(method, pathname, body);
  if (res.status >= 400) throw new Error(`${method} ${pathname}: ${res.status}`);
  return res.body;
}

/** The status each API instance answers `GET pathname` with. */
async function statuses(pathname: string, token: string): Promise<number[]> {
  return Promise.all(
    apis.map(async (api) => {
      const res = await fetch(`${api.url}${pathname}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

/** Every instance's answer once all of them give `status` (or what they gave at the deadline). */
const allOnce = (pathname: string, token: string, status: number) =>
  until(
    () => statuses(pathname, token),
    (seen) => seen.every((s) => s === status),
    20_000,
  );

async function signIn(roles: string[]) {
  const email = `roles-${randomUUID().slice(0, 8)}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const user = await admin('POST', '/admin/users', { email, password, roles });
  const config = await discover(auth, (await publicSpa(auth)).client_id);
  const tokens = await pkceSignIn(
    config,
    { email, password },
    { scope: 'openid api', resource: TEST_API_AUDIENCE },
  );
  return { id: user.id as string, token: tokens.access_token };
}

describe('roles as data at the API', () => {
  test('the built-in resource registers exactly what the routes check', async () => {
    // Migration 029 froze the catalogue: a permission a route checks must be registered there.
    const resource = await createResourceStore(database.db).get(BUILT_IN_RESOURCE_ID);
    expect(resource?.permissions.map((p) => p.name).sort()).toEqual([...PERMISSIONS].sort());
  });

  test('a new role applies on every instance without a restart; removing its permission refuses', async () => {
    const role = `auditor-${randomUUID().slice(0, 6)}`;
    await admin('PUT', `/admin/roles/${role}`, { permissions: ['payments:read'] });
    const { token } = await signIn([role]);
    // Its one permission, and nothing else.
    expect(await allOnce('/payments', token, 200)).toEqual([200, 200]);
    expect(await statuses('/orders', token)).toEqual([403, 403]);

    await admin('PUT', `/admin/roles/${role}`, { permissions: ['payments:read', 'orders:read'] });
    expect(await allOnce('/orders', token, 200)).toEqual([200, 200]);

    await admin('PUT', `/admin/roles/${role}`, { permissions: ['payments:read'] });
    expect(await allOnce('/orders', token, 403)).toEqual([403, 403]);
    expect(await statuses('/payments', token)).toEqual([200, 200]);
  });

  test('a role taken from a user ends the tokens that carry it; then it can be deleted', async () => {
    const role = `reader-${randomUUID().slice(0, 6)}`;
    await admin('PUT', `/admin/roles/${role}`, { permissions: ['orders:read'] });
    const user = await signIn([role]);
    expect(await allOnce('/orders', user.token, 200)).toEqual([200, 200]);

    // The token still names the role: the auth server ends it (deny list) rather than wait for expiry.
    await admin('PATCH', `/admin/users/${user.id}`, { roles: [] });
    expect(await allOnce('/orders', user.token, 401)).toEqual([401, 401]);
    expect((await auth.admin('DELETE', `/admin/roles/${role}`)).status).toBe(204);
  });

  test('the built-in roles come from the table too', async () => {
    const viewer = await signIn(['viewer']);
    expect(await statuses('/orders', viewer.token)).toEqual([200, 200]);
    const before = (await admin('GET', '/admin/roles/viewer')).permissions as string[];
    await admin('PUT', '/admin/roles/viewer', {
      permissions: before.filter((p) => p !== 'orders:read'),
    });
    try {
      expect(await allOnce('/orders', viewer.token, 403)).toEqual([403, 403]);
    } finally {
      await admin('PUT', '/admin/roles/viewer', { permissions: before });
    }
    expect(await allOnce('/orders', viewer.token, 200)).toEqual([200, 200]);
  });
});
