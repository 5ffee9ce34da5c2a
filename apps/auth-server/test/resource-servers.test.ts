import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  approveDevice,
  browser,
  browserLogin,
  createClient,
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  putRole,
  REDIRECT_URI,
  registerResource,
  tokenRequest,
} from '@portcullis/testing';

// Registered APIs at the token endpoint (docs/roles.md "Tokens"): every grant honours
// `resource`, narrows `scope` to what the subject's roles grant there, and an unknown API is
// invalid_target.

const INVOICES = 'https://invoices.example';
let t: TestAuthServer;

beforeAll(async () => {
  t = await startTestAuthServer();
  await registerResource(t, {
    identifier: INVOICES,
    name: 'Invoices',
    permissions: [
      { name: 'invoices:read', description: 'Read your invoices' },
      { name: 'invoices:write', description: 'Issue and change invoices' },
    ],
  });
  await putRole(t, 'invoice-reader', { [INVOICES]: ['invoices:read'] });
});

afterAll(async () => {
  await t?.close();
});

const basic = (c: { client_id: string; client_secret?: string }) => ({
  authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`,
});

async function machine(roles: string[], extra: Record<string, unknown> = {}) {
  return createClient(t, {
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    roles,
    ...extra,
  });
}

describe('client credentials for a registered API', () => {
  test('the token has the API as its only audience and only what the roles grant', async () => {
    const client = await machine(['invoice-reader']);
    const res = await tokenRequest(
      t,
      {
        grant_type: 'client_credentials',
        resource: INVOICES,
        scope: 'invoices:read invoices:write',
      },
      basic(client),
    );
    expect(res.status).toBe(200);
    // Asked for more, given less; the response says so (RFC 6749 §3.3).
    expect(res.body['scope']).toBe('invoices:read');
    const claims = decodeJwt(res.body['access_token'] as string).payload;
    expect(claims['aud']).toBe(INVOICES);
    expect(claims['scope']).toBe('invoices:read');
  });

  test('`api` is spelled out into the permissions the roles grant there', async () => {
    const client = await machine(['invoice-reader']);
    const res = await tokenRequest(
      t,
      { grant_type: 'client_credentials', resource: INVOICES, scope: 'api' },
      basic(client),
    );
    expect(res.status).toBe(200);
    expect(res.body['scope']).toBe('api invoices:read');
  });

  test('a client whose roles grant nothing there gets no permission', async () => {
    const client = await machine(['viewer']);
    const res = await tokenRequest(
      t,
      { grant_type: 'client_credentials', resource: INVOICES, scope: 'invoices:read' },
      basic(client),
    );
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body['access_token'] as string).payload['scope']).toBeUndefined();
  });

  test('an unknown resource is invalid_target; an unknown scope invalid_scope', async () => {
    const client = await machine(['invoice-reader']);
    const unknown = await tokenRequest(
      t,
      { grant_type: 'client_credentials', resource: 'https://nowhere.example', scope: 'api' },
      basic(client),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body['error']).toBe('invalid_target');
    const scope = await tokenRequest(
      t,
      { grant_type: 'client_credentials', resource: INVOICES, scope: 'invoices:pay' },
      basic(client),
    );
    expect(scope.status).toBe(400);
    expect(scope.body['error']).toBe('invalid_scope');
  });

  test('prototype names and NUL bytes as resource or scope are refused, never a 500', async () => {
    const client = await machine(['invoice-reader']);
    for (const [resource, scope, error] of [
      ['__proto__', 'invoices:read', 'invalid_target'],
      ['https://inv\u0000oices.example', 'invoices:read', 'invalid_target'],
      [INVOICES, '__proto__', 'invalid_scope'],
      [INVOICES, 'invoices:read\u0000', 'invalid_scope'],
    ] as const) {
      const res = await tokenRequest(
        t,
        { grant_type: 'client_credentials', resource, scope },
        basic(client),
      );
      expect([resource, res.status, res.body['error']]).toEqual([resource, 400, error]);
    }
  });

  test('a permission registered later is known at once, and listed in discovery', async () => {
    const before = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    expect(((await before.json()) as { scopes_supported: string[] }).scopes_supported).toEqual(
      expect.arrayContaining(['invoices:read', 'invoices:write']),
    );
    const res = await t.admin('POST', '/admin/resources', {
      identifier: 'https://reports.example',
      name: 'Reports',
      permissions: [{ name: 'reports:read' }],
    });
    expect(res.status).toBe(201);
    const after = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    expect(((await after.json()) as { scopes_supported: string[] }).scopes_supported).toContain(
      'reports:read',
    );
    await putRole(t, 'report-reader', { 'https://reports.example': ['reports:read'] });
    const client = await machine(['report-reader']);
    const token = await tokenRequest(
      t,
      {
        grant_type: 'client_credentials',
        resource: 'https://reports.example',
        scope: 'reports:read',
      },
      basic(client),
    );
    expect(token.body['scope']).toBe('reports:read');
  });
});

describe("an API's own token settings", () => {
  test('its access-token lifetime', async () => {
    await registerResource(t, {
      identifier: 'https://short.example',
      permissions: ['short:read'],
      accessTokenTtl: 120,
    });
    await putRole(t, 'short-reader', { 'https://short.example': ['short:read'] });
    const client = await machine(['short-reader']);
    const res = await tokenRequest(
      t,
      { grant_type: 'client_credentials', resource: 'https://short.example', scope: 'short:read' },
      basic(client),
    );
    expect(res.body['expires_in']).toBe(120);
    const { exp, iat } = decodeJwt(res.body['access_token'] as string).payload as {
      exp: number;
      iat: number;
    };
    expect(exp - iat).toBe(120);
  });

  test('DPoP required: a token request without a proof is refused, with one it is bound', async () => {
    await registerResource(t, {
      identifier: 'https://bound.example',
      permissions: ['bound:read'],
      dpopRequired: true,
    });
    await putRole(t, 'bound-reader', { 'https://bound.example': ['bound:read'] });
    const client = await machine(['bound-reader']);
    const bare = await tokenRequest(
      t,
      { grant_type: 'client_credentials', resource: 'https://bound.example', scope: 'bound:read' },
      basic(client),
    );
    expect(bare.status).toBe(400);
    expect(bare.body['error']).toBe('invalid_request');
    expect(bare.body['error_description']).toMatch(/DPoP/);

    const config = await discover(t, client.client_id, client.client_secret);
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const bound = await oidc.clientCredentialsGrant(
      config,
      { resource: 'https://bound.example', scope: 'bound:read' },
      { DPoP },
    );
    expect(bound.token_type).toBe('dpop');
    expect(decodeJwt(bound.access_token).payload['cnf']).toMatchObject({
      jkt: expect.any(String),
    });
  });
});

describe('a user signing in for a registered API', () => {
  test('PKCE with `resource`: the scope is what their roles grant; refresh keeps to it', async () => {
    const user = await createUser(t, ['viewer', 'invoice-reader']);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const tokens = await pkceSignIn(config, user, {
      scope: 'openid offline_access invoices:read invoices:write',
      resource: INVOICES,
    });
    const claims = decodeJwt(tokens.access_token).payload;
    expect(claims['aud']).toBe(INVOICES);
    expect(claims['scope']).toBe('invoices:read');
    expect(tokens.scope?.split(' ').sort()).toEqual(['invoices:read', 'offline_access', 'openid']);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, {
      resource: INVOICES,
    });
    expect(decodeJwt(refreshed.access_token).payload).toMatchObject({
      aud: INVOICES,
      scope: 'invoices:read',
    });
  });

  test('`api` on the built-in API lists what the roles grant there', async () => {
    const user = await createUser(t, ['viewer']);
    const spa = await publicSpa(t);
    const tokens = await pkceSignIn(await discover(t, spa.client_id), user, {
      scope: 'openid api',
    });
    const claims = decodeJwt(tokens.access_token).payload;
    expect(claims['aud']).toBe(t.apiAudience);
    expect(String(claims['scope']).split(' ').sort()).toEqual(
      ['api', 'events:read', 'orders:read', 'users:read'].sort(),
    );
  });

  test('the consent page names the API and what each permission allows', async () => {
    const spa = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
    });
    const user = await createUser(t, ['invoice-reader']);
    const config = await discover(t, spa.client_id);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid invoices:read invoices:write',
      resource: INVOICES,
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const pages: string[] = [];
    const back = await browserLogin(url.href, user, { b: browser(), pages });
    expect(back.searchParams.get('code')).toBeTruthy();
    const consent = pages.find((p) => p.includes('Authorize access'))!;
    expect(consent).toContain('<strong>Invoices</strong>');
    expect(consent).toContain('Read your invoices');
    // What the user's roles do not grant is not asked for.
    expect(consent).not.toContain('invoices:write');
  });
});

describe('the other grants and settings', () => {
  test('the device code grant honours `resource`', async () => {
    const device = await createClient(t, {
      token_endpoint_auth_method: 'none',
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
      first_party: true,
    });
    const config = await discover(t, device.client_id);
    const auth = await oidc.initiateDeviceAuthorization(config, {
      scope: 'invoices:read invoices:write',
      resource: INVOICES,
    });
    const user = await createUser(t, ['invoice-reader']);
    await approveDevice(t, browser(), auth.user_code, user);
    const tokens = await oidc.pollDeviceAuthorizationGrant(config, auth);
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({
      aud: INVOICES,
      scope: 'invoices:read',
    });
  });

  test('REGISTRATION_SCOPES naming a scope no API has stops the start', async () => {
    await expect(
      t.startInstance({ REGISTRATION: 'token', REGISTRATION_SCOPES: 'openid invoices:pay' }),
    ).rejects.toThrow(/REGISTRATION_SCOPES names scopes no registered API has: invoices:pay/);
    const fine = await t.startInstance({
      REGISTRATION: 'token',
      REGISTRATION_SCOPES: 'openid invoices:read',
    });
    await fine.close();
  });

  // Last: it makes an ES256 key the newest, for every later token of this server.
  test("an API's signing algorithm: the newest key of it signs its tokens", async () => {
    await registerResource(t, {
      identifier: 'https://rsa.example',
      permissions: ['rsa:read'],
      signingAlg: 'RS256',
    });
    await putRole(t, 'rsa-reader', { 'https://rsa.example': ['rsa:read'] });
    const rotated = await t.admin('POST', '/admin/signing-keys', { alg: 'ES256', activate: 'now' });
    expect(rotated.status).toBe(201);
    const client = await machine(['rsa-reader', 'viewer']);
    const alg = async (resource: string, scope: string) => {
      const res = await tokenRequest(
        t,
        { grant_type: 'client_credentials', resource, scope },
        basic(client),
      );
      expect(res.status).toBe(200);
      return decodeJwt(res.body['access_token'] as string).header['alg'];
    };
    expect(await alg('https://rsa.example', 'rsa:read')).toBe('RS256');
    expect(await alg(t.apiAudience, 'api')).toBe('ES256');
  });
});
