/**
 * RFC 8693 token exchange (README "Token exchange (RFC 8693)") through openid-client, a
 * maintained third-party library: a service holding a user's API token exchanges it for a
 * token for a second resource server — a small Koa service started here with the published
 * resource-server middleware (@portcullis/claims) — which accepts the exchanged token and
 * refuses the original.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { actorChain, createResourceServer } from '@portcullis/claims';
import { koaAuth } from '@portcullis/claims/koa';
import Koa from 'koa';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createClient,
  apiScopeOf,
  createUser,
  registerResource,
  decodeJwt,
  discover,
  freePort,
  pkceSignIn,
  publicSpa,
  REDIRECT_URI,
  TEST_API_AUDIENCE,
} from '@portcullis/testing';
import { toJsonb } from '@portcullis/db';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const USER_SCOPE = 'openid offline_access api orders:read orders:write payments:read';

let t: TestAuthServer;
let ledgerUrl: string;
let ledger: Server;

beforeAll(async () => {
  const port = await freePort();
  ledgerUrl = `http://127.0.0.1:${port}`;
  t = await startTestAuthServer();
  // The second API, registered as data; editors (the test users' role) may read it.
  await registerResource(t, {
    identifier: ledgerUrl,
    name: 'Ledger',
    permissions: ['orders:read', 'payments:read'],
  });
  const editor = (await t.admin('GET', '/admin/roles/editor')).body;
  await t.admin('PUT', '/admin/roles/editor', {
    permissions: editor['permissions'],
    grants: [{ resource: ledgerUrl, permissions: ['orders:read', 'payments:read'] }],
  });
  // The second resource server: only tokens whose aud is its own URL.
  const rs = createResourceServer({ issuer: t.issuer, audience: ledgerUrl });
  const app = new Koa();
  app.use(koaAuth(rs, { permission: 'orders:read' }));
  app.use((ctx) => {
    const principal = ctx.state['principal'] as Parameters<typeof actorChain>[0] & {
      subject: string;
      scope: string[];
    };
    ctx.body = {
      subject: principal.subject,
      scope: principal.scope,
      actors: actorChain(principal),
    };
  });
  ledger = app.listen(port, '127.0.0.1');
}, 60_000);

afterAll(async () => {
  await new Promise((r) => ledger?.close(r));
  await t?.close();
});

/** A service registered for exchange (admin API), as openid-client sees it. */
async function service(policy: Record<string, unknown> | undefined, extra = {}) {
  const c = await createClient(t, {
    grant_types: policy ? [GRANT] : ['client_credentials'],
    ...(policy ? { token_exchange: policy } : {}),
    ...extra,
  });
  return { id: c.client_id, config: await discover(t, c.client_id, c.client_secret) };
}

async function userToken(options: { DPoP?: oidc.DPoPHandle } = {}) {
  const user = await createUser(t);
  const spa = await publicSpa(t);
  const config = await discover(t, spa.client_id);
  const tokens = await pkceSignIn(config, user, { scope: USER_SCOPE, ...options });
  return { user, config, tokens };
}

function exchange(
  config: oidc.Configuration,
  subjectToken: string,
  params: Record<string, string> = {},
  options: { DPoP?: oidc.DPoPHandle } = {},
) {
  return oidc.genericGrantRequest(
    config,
    GRANT,
    {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
      resource: ledgerUrl,
      ...params,
    },
    options,
  );
}

const callLedger = (token: string) =>
  fetch(`${ledgerUrl}/balance`, { headers: { authorization: `Bearer ${token}` } });

describe('token exchange (RFC 8693)', () => {
  test('discovery lists the grant type', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const metadata = (await res.json()) as { grant_types_supported: string[] };
    expect(metadata.grant_types_supported).toContain(GRANT);
  });

  test('a service exchanges a user token for the second resource; act names it', async () => {
    const { user, tokens } = await userToken();
    const svc = await service({ audiences: [ledgerUrl] });

    const exchanged = await exchange(svc.config, tokens.access_token);
    expect(exchanged.issued_token_type).toBe(ACCESS_TOKEN);
    expect(exchanged.token_type).toBe('bearer');
    const claims = decodeJwt(exchanged.access_token).payload;
    expect(claims).toMatchObject({
      sub: user.id,
      aud: ledgerUrl,
      client_id: svc.id,
      act: { sub: svc.id },
      // Everything held that the user's roles grant on the ledger, `api` spelled out.
      scope: 'api orders:read payments:read',
    });
    // Revoking the user's grant reaches the exchanged token too.
    expect(claims['grant_id']).toBe(decodeJwt(tokens.access_token).payload['grant_id']);
    expect(claims['exp']).toBeLessThanOrEqual(
      decodeJwt(tokens.access_token).payload['exp'] as number,
    );

    // The second resource server accepts the exchanged token and refuses the original.
    const ok = await callLedger(exchanged.access_token);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      subject: user.id,
      scope: ['api', 'orders:read', 'payments:read'],
      actors: [svc.id],
    });
    const original = await callLedger(tokens.access_token);
    expect(original.status).toBe(401);
  });

  test('fewer scopes on request; a wider scope is refused', async () => {
    const { tokens } = await userToken();
    const svc = await service({ audiences: [ledgerUrl] });
    const narrow = await exchange(svc.config, tokens.access_token, { scope: 'orders:read' });
    expect(decodeJwt(narrow.access_token).payload['scope']).toBe('orders:read');
    // Held by the user but not a scope of the target; a scope of the target the user lacks.
    for (const scope of ['orders:write', 'orders:read users:read']) {
      await expect(exchange(svc.config, tokens.access_token, { scope })).rejects.toMatchObject({
        error: 'invalid_scope',
      });
    }
    const lesser = await userToken();
    const fewer = await pkceSignIn(lesser.config, lesser.user, { scope: 'openid orders:read' });
    await expect(
      exchange(svc.config, fewer.access_token, { scope: 'payments:read' }),
    ).rejects.toMatchObject({ error: 'invalid_scope' });
  });

  test('`api` covers each narrower API scope: passing one on is no widening', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const tokens = await pkceSignIn(await discover(t, spa.client_id), user, {
      scope: 'openid api',
    });
    const svc = await service({ audiences: [ledgerUrl, TEST_API_AUDIENCE] });
    const forLedger = await exchange(svc.config, tokens.access_token);
    expect(decodeJwt(forLedger.access_token).payload['scope']).toBe(
      'api orders:read payments:read',
    );
    const forApi = await exchange(svc.config, tokens.access_token, { resource: TEST_API_AUDIENCE });
    expect(decodeJwt(forApi.access_token).payload['scope']).toBe(await apiScopeOf(t, ['editor']));
    const narrow = await exchange(svc.config, tokens.access_token, {
      resource: TEST_API_AUDIENCE,
      scope: 'orders:read',
    });
    expect(decodeJwt(narrow.access_token).payload['scope']).toBe('orders:read');
  });

  test('the client registered scope bounds what it gets', async () => {
    const { tokens } = await userToken();
    const svc = await service({ audiences: [ledgerUrl] }, { scope: 'orders:read' });
    const exchanged = await exchange(svc.config, tokens.access_token);
    expect(decodeJwt(exchanged.access_token).payload['scope']).toBe('orders:read');
  });

  test('a chain keeps every actor', async () => {
    const { user, tokens } = await userToken();
    const first = await service({ audiences: [TEST_API_AUDIENCE] });
    const second = await service({ audiences: [ledgerUrl] });
    const forApi = await exchange(first.config, tokens.access_token, {
      resource: TEST_API_AUDIENCE,
    });
    expect(decodeJwt(forApi.access_token).payload['act']).toEqual({ sub: first.id });
    const forLedger = await exchange(second.config, forApi.access_token);
    expect(decodeJwt(forLedger.access_token).payload['act']).toEqual({
      sub: second.id,
      act: { sub: first.id },
    });
    const res = await callLedger(forLedger.access_token);
    expect(await res.json()).toMatchObject({ subject: user.id, actors: [second.id, first.id] });
    // Each exchange is audited with its chain.
    await t.server.settle();
    const audit = await t.admin('GET', '/admin/audit?kind=token_exchanged&limit=100');
    const entry = (audit.body['items'] as Record<string, unknown>[]).find(
      (e) => e['clientId'] === second.id,
    );
    expect(entry).toMatchObject({
      subject: user.id,
      detail: { audience: ledgerUrl, actors: [second.id, first.id] },
    });
  });

  test('refusals: client, audience, token type, forged and revoked subject tokens', async () => {
    const { config, tokens } = await userToken();
    const allowed = await service({ audiences: [ledgerUrl] });

    // A client without the grant (no token_exchange policy).
    const other = await service(undefined);
    await expect(exchange(other.config, tokens.access_token)).rejects.toMatchObject({
      error: 'invalid_request',
    });
    // An audience not in the client's policy; one not registered at all.
    const apiOnly = await service({ audiences: [TEST_API_AUDIENCE] });
    await expect(exchange(apiOnly.config, tokens.access_token)).rejects.toMatchObject({
      error: 'invalid_target',
    });
    await expect(
      exchange(allowed.config, tokens.access_token, { resource: 'https://elsewhere.example' }),
    ).rejects.toMatchObject({ error: 'invalid_target' });
    // The wrong subject_token_type; a missing subject_token.
    await expect(
      exchange(allowed.config, tokens.access_token, {
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      }),
    ).rejects.toMatchObject({ error: 'invalid_request' });
    await expect(
      exchange(allowed.config, tokens.access_token, {
        requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
      }),
    ).rejects.toMatchObject({ error: 'invalid_request' });
    // A refresh token, an ID token, a tampered token: not access tokens of this server.
    const [h, p, s] = tokens.access_token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const widened = Buffer.from(JSON.stringify({ ...payload, scope: 'api users:*' })).toString(
      'base64url',
    );
    for (const bad of [tokens.refresh_token!, tokens.id_token!, `${h}.${widened}.${s}`]) {
      await expect(exchange(allowed.config, bad)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    }
    // A client-credentials token is not a user's.
    const machine = await service(undefined, { roles: ['viewer'], scope: 'api' });
    const cc = await oidc.clientCredentialsGrant(machine.config, {
      scope: 'api',
      resource: TEST_API_AUDIENCE,
    });
    await expect(exchange(allowed.config, cc.access_token)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    // Revoked: the user's app revokes its grant; the access token is on the deny list.
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    await t.server.settle();
    await expect(exchange(allowed.config, tokens.access_token)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  test('impersonation (no act) only when the client is configured for it', async () => {
    const { user, tokens } = await userToken();
    const delegate = await service({ audiences: [ledgerUrl] });
    await expect(
      exchange(delegate.config, tokens.access_token, { impersonate: 'true' }),
    ).rejects.toMatchObject({ error: 'unauthorized_client' });
    const impersonator = await service({ audiences: [ledgerUrl], impersonation: true });
    const token = await exchange(impersonator.config, tokens.access_token, {
      impersonate: 'true',
    });
    const claims = decodeJwt(token.access_token).payload;
    expect(claims['act']).toBeUndefined();
    expect(claims['sub']).toBe(user.id);
    // Without asking, even this client's token names it.
    const delegated = await exchange(impersonator.config, tokens.access_token);
    expect(decodeJwt(delegated.access_token).payload['act']).toEqual({ sub: impersonator.id });
  });

  test('a DPoP-bound subject token is exchanged only with a proof of the same key', async () => {
    const keyPair = await oidc.randomDPoPKeyPair();
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const spaConfig = await discover(t, spa.client_id);
    const tokens = await pkceSignIn(spaConfig, user, {
      scope: USER_SCOPE,
      DPoP: oidc.getDPoPHandle(spaConfig, keyPair),
    });
    const jkt = (decodeJwt(tokens.access_token).payload['cnf'] as { jkt: string }).jkt;
    const svc = await service({ audiences: [ledgerUrl] });

    await expect(exchange(svc.config, tokens.access_token)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    const otherKey = oidc.getDPoPHandle(svc.config, await oidc.randomDPoPKeyPair());
    await expect(
      exchange(svc.config, tokens.access_token, {}, { DPoP: otherKey }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });

    const sameKey = oidc.getDPoPHandle(svc.config, keyPair);
    const exchanged = await exchange(svc.config, tokens.access_token, {}, { DPoP: sameKey });
    expect(exchanged.token_type).toBe('dpop');
    expect(decodeJwt(exchanged.access_token).payload['cnf']).toEqual({ jkt });
  });

  test('the admin API keeps the policy and adds the grant; bad policies are refused', async () => {
    const created = await createClient(t, {
      grant_types: ['client_credentials'],
      token_exchange: { audiences: [ledgerUrl] },
    });
    expect(created['grant_types']).toEqual(['client_credentials', GRANT]);
    expect(created['token_exchange']).toEqual({ audiences: [ledgerUrl] });
    const noPolicy = await t.admin('POST', '/admin/clients', { grant_types: ['token_exchange'] });
    expect(noPolicy.status).toBe(422);
    const bad = await t.admin('POST', '/admin/clients', {
      grant_types: ['client_credentials'],
      token_exchange: { audiences: ['not a url'] },
    });
    expect(bad.status).toBe(422);
    const off = await t.admin('PATCH', `/admin/clients/${created.client_id}`, {
      token_exchange: null,
    });
    expect(off.status).toBe(200);
    expect(off.body['grant_types']).toEqual(['client_credentials']);
    expect(off.body['token_exchange']).toBeUndefined();
  });

  test('a public client is refused a token-exchange policy by the admin API', async () => {
    const policy = { audiences: [ledgerUrl], impersonation: true };
    const created = await t.admin('POST', '/admin/clients', {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      token_exchange: policy,
    });
    expect([created.status, created.body['error']]).toEqual([422, 'validation_failed']);
    expect(created.body['fields']).toMatchObject({
      token_exchange: [expect.stringMatching(/clients that authenticate/)],
    });
    // Nor added later to one that exists.
    const spa = await publicSpa(t);
    const patched = await t.admin('PATCH', `/admin/clients/${spa.client_id}`, {
      token_exchange: policy,
    });
    expect([patched.status, patched.body['error']]).toEqual([422, 'validation_failed']);
    expect((await t.admin('GET', `/admin/clients/${spa.client_id}`)).body).not.toHaveProperty(
      'token_exchange',
    );
  });

  test('a public client stored with a policy (before the rule) is refused at /token: invalid_client', async () => {
    const { tokens } = await userToken();
    const clientId = `legacy-public-${Date.now()}`;
    await t.database.db('clients').insert({
      id: clientId,
      metadata: toJsonb({
        client_id: clientId,
        token_endpoint_auth_method: 'none',
        grant_types: [GRANT],
        response_types: [],
        redirect_uris: [],
        token_exchange: { audiences: [ledgerUrl], impersonation: true },
      }),
    });
    const res = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: GRANT,
        client_id: clientId,
        subject_token: tokens.access_token,
        subject_token_type: ACCESS_TOKEN,
        resource: ledgerUrl,
      }),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect([res.status, body['error']]).toEqual([401, 'invalid_client']);
    expect(body['error_description']).toMatch(/clients that authenticate/);
    expect(body['access_token']).toBeUndefined();
  });
});
