import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_SCOPE } from '@portcullis/claims';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { apiScopeOf, createClient, tokenRequest } from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const basicAuth = (client: { client_id: string; client_secret?: string }) => ({
  authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
});

describe('scopes a client may request', () => {
  test('discovery lists the OIDC scopes, api and every registered permission', async () => {
    const res = await fetch(`${t.server.url}/.well-known/openid-configuration`);
    const { scopes_supported } = (await res.json()) as { scopes_supported: string[] };
    const builtIn = (await t.admin('GET', '/admin/permissions')).body['items'] as string[];
    expect(builtIn).toContain('orders:read');
    const expected = ['openid', 'offline_access', 'profile', 'email', API_SCOPE, ...builtIn];
    expect([...scopes_supported].sort()).toEqual([...new Set(expected)].sort());
  });

  test('a client can be registered with API scopes only, and is held to them', async () => {
    const client = await createClient(t, {
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      roles: ['admin'],
      scope: 'orders:read',
    });
    expect(client.scope).toBe('orders:read');
    const allowed = await tokenRequest(
      t,
      { grant_type: 'client_credentials', scope: 'orders:read' },
      basicAuth(client),
    );
    expect(allowed.status).toBe(200);
    expect(allowed.body.scope).toBe('orders:read');
    const beyond = await tokenRequest(
      t,
      { grant_type: 'client_credentials', scope: API_SCOPE },
      basicAuth(client),
    );
    expect(beyond.status).toBe(400);
    expect(beyond.body.error).toBe('invalid_scope');
  });

  test("client credentials without scope get the client's registered scope", async () => {
    const client = await createClient(t, {
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      roles: ['viewer'],
      scope: API_SCOPE,
    });
    const res = await tokenRequest(t, { grant_type: 'client_credentials' }, basicAuth(client));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe(await apiScopeOf(t, ['viewer']));
  });
});
