import { afterAll, beforeAll, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { apiScopeOf, decodeJwt, discover } from '@portcullis/testing';
import { purgeExpired } from '../src/data/oidc-adapter.js';

let t: TestAuthServer;
const printed: string[] = [];
beforeAll(async () => {
  // The demo listening on another port than its default (5173): the seed follows it.
  t = await startTestAuthServer(
    { SEED_DEMO: 'true', WEB_PORT: '8080' },
    { print: (s) => printed.push(s) },
  );
});
afterAll(async () => {
  await t?.close();
});

test('first start seeds demo users and clients and prints the service secret once', async () => {
  const users = await t.admin('GET', '/admin/users');
  expect(users.body.items.map((u: { email: string }) => u.email).sort()).toEqual([
    'admin@example.com',
    'editor@example.com',
    'viewer@example.com',
  ]);
  const clients = await t.admin('GET', '/admin/clients');
  expect(clients.body.items.map((c: { client_id: string }) => c.client_id).sort()).toEqual([
    'demo-cli',
    'demo-device',
    'demo-service',
    'demo-spa',
  ]);
  const spa = clients.body.items.find((c: { client_id: string }) => c.client_id === 'demo-spa');
  expect(spa.redirect_uris).toEqual(['http://localhost:8080/callback']);
  expect(printed.join('\n')).toContain('redirect http://localhost:8080/callback');
  const secret = /client_secret (\S+)/.exec(printed.join('\n'))![1]!;
  const config = await discover(t, 'demo-service', secret);
  const tokens = await oidc.clientCredentialsGrant(config, { scope: 'api' });
  expect(tokens.access_token).toBeTruthy();
  // Without `scope` demo-service gets its registered one: its editor role's permissions.
  const service = clients.body.items.find(
    (c: { client_id: string }) => c.client_id === 'demo-service',
  );
  expect(service.scope).toBe('api');
  const unscoped = await oidc.clientCredentialsGrant(config);
  const editorScope = await apiScopeOf(t, ['editor']);
  expect(unscoped.scope).toBe(editorScope);
  expect(decodeJwt(unscoped.access_token).payload).toMatchObject({
    scope: editorScope,
    roles: ['editor'],
  });
  expect(printed.join('\n')).toContain('portcullis-admin');
});

test("demo-service's secret, printed once at first start, can be rotated: the new one works, the old one is refused", async () => {
  const old = /client_secret (\S+)/.exec(printed.join('\n'))![1]!;
  const rotated = await t.admin('POST', '/admin/clients/demo-service/secret');
  expect(rotated.status).toBe(200);
  const fresh = await discover(t, 'demo-service', rotated.body.client_secret);
  expect((await oidc.clientCredentialsGrant(fresh)).access_token).toBeTruthy();
  const refused = await oidc
    .clientCredentialsGrant(await discover(t, 'demo-service', old))
    .catch((e: unknown) => e);
  expect(refused).toMatchObject({ status: 401 });
});

test('expired artifacts are purged', async () => {
  await t.database.db('oidc_payloads').insert({
    id: 'old',
    type: 'Session',
    payload: JSON.stringify({ exp: 1 }),
    expires_at: new Date(Date.now() - 1000),
  });
  expect(await purgeExpired(t.database.db)).toBeGreaterThanOrEqual(1);
  expect(await t.database.db('oidc_payloads').where({ id: 'old' })).toHaveLength(0);
});
