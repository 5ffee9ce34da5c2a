import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { apiScopeOf, createClient, discover, publicSpa, tokenRequest } from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const service = (method = 'client_secret_basic', roles = ['editor']) =>
  createClient(t, {
    token_endpoint_auth_method: method,
    grant_types: ['client_credentials'],
    roles,
  });

describe('client credentials', () => {
  test('client_secret_basic: JWT with sub client:<id> and the client roles', async () => {
    const client = await service();
    const config = await discover(t, client.client_id, client.client_secret);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'api' });
    expect(tokens.refresh_token).toBeUndefined();
    const jwks = createRemoteJWKSet(new URL(`${t.issuer}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: t.issuer,
      audience: t.apiAudience,
      typ: 'at+jwt',
    });
    expect(protectedHeader.kid).toBeTruthy();
    expect(payload).toMatchObject({
      sub: `client:${client.client_id}`,
      client_id: client.client_id,
      roles: ['editor'],
      // `api` spelled out into what the client's roles grant on the API.
      scope: await apiScopeOf(t, ['editor']),
    });
    expect(payload.grant_id).toBeUndefined();
  });

  test('client_secret_post works; the stored secret is only a hash', async () => {
    const client = await service('client_secret_post', ['viewer']);
    const config = await discover(
      t,
      client.client_id,
      client.client_secret,
      oidc.ClientSecretPost(client.client_secret!),
    );
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.access_token).toBeTruthy();
    const row = await t.database.db('clients').where({ id: client.client_id }).first();
    expect(JSON.stringify(row.metadata)).not.toContain(client.client_secret);
    expect(row.metadata.client_secret).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a wrong secret is 401 invalid_client', async () => {
    const client = await service();
    const basic = Buffer.from(`${client.client_id}:wrong-secret`).toString('base64');
    const res = await tokenRequest(
      t,
      { grant_type: 'client_credentials' },
      { authorization: `Basic ${basic}` },
    );
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  test('an unknown scope is 400 invalid_scope; a partly unsupported one reports what was granted', async () => {
    const client = await service();
    const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
    const auth = { authorization: `Basic ${basic}` };
    const unknown = await tokenRequest(
      t,
      { grant_type: 'client_credentials', scope: 'api verify-unknown-x' },
      auth,
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('invalid_scope');
    expect(unknown.body.access_token).toBeUndefined();
    // openid is known but means nothing without a user: the response says what was granted.
    const narrowed = await tokenRequest(
      t,
      { grant_type: 'client_credentials', scope: 'api openid' },
      auth,
    );
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe(await apiScopeOf(t, ['editor']));
  });

  test('a public client cannot use client_credentials', async () => {
    const spa = await publicSpa(t);
    const res = await tokenRequest(t, {
      grant_type: 'client_credentials',
      client_id: spa.client_id,
    });
    // oidc-provider refuses it before looking at the client (the grant needs client auth).
    expect(res.status).toBe(400);
    expect(['invalid_request', 'unauthorized_client', 'invalid_client']).toContain(res.body.error);
    expect(res.body.access_token).toBeUndefined();
    const refused = await t.admin('POST', '/admin/clients', {
      token_endpoint_auth_method: 'none',
      grant_types: ['client_credentials'],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.fields.grant_types).toBeDefined();
  });
});
