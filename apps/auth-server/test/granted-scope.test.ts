import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  apiScopeOf,
  browserLogin,
  createClient,
  createUser,
  discover,
  pkceSignIn,
  publicSpa,
  REDIRECT_URI,
  tokenRequest,
} from '@portcullis/testing';
import * as oidc from 'openid-client';

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

// The browser demo's scope (README configuration table, WEB_SCOPE), as Authlib and
// openid-client re-send it on every refresh.
const DEMO_SCOPE = 'openid profile email offline_access api';
const sorted = (scope: unknown) => [...new Set(String(scope).split(' '))].sort();
/** DEMO_SCOPE as granted to an editor: `api` spelled out into the role's permissions. */
const grantedToEditor = async () => sorted(`${DEMO_SCOPE} ${await apiScopeOf(t, ['editor'])}`);

describe('the granted scope', () => {
  test.each([
    ['a first-party client', true],
    ['a third-party client (after its consent page)', false],
  ])(
    '%s gets the whole scope it asked for, and may refresh with it',
    async (_label, firstParty) => {
      const user = await createUser(t);
      const spa = await publicSpa(t, { first_party: firstParty });
      const config = await discover(t, spa.client_id);
      const tokens = await pkceSignIn(config, user, { scope: DEMO_SCOPE });
      expect(sorted(tokens.scope)).toEqual(await grantedToEditor());
      expect(tokens.refresh_token).toBeTruthy();

      const refreshed = await tokenRequest(t, {
        grant_type: 'refresh_token',
        client_id: spa.client_id,
        refresh_token: tokens.refresh_token!,
        scope: DEMO_SCOPE,
      });
      expect(refreshed.status).toBe(200);
      expect(sorted(refreshed.body.scope)).toEqual(await grantedToEditor());
      // Without scope: the same, as RFC 6749 §6 says.
      const again = await tokenRequest(t, {
        grant_type: 'refresh_token',
        client_id: spa.client_id,
        refresh_token: refreshed.body.refresh_token,
      });
      expect(again.status).toBe(200);
      expect(sorted(again.body.scope)).toEqual(await grantedToEditor());
      // Beyond the grant: refused, naming the scope.
      const beyond = await tokenRequest(t, {
        grant_type: 'refresh_token',
        client_id: spa.client_id,
        refresh_token: again.body.refresh_token,
        scope: `${DEMO_SCOPE} ${'orders:read'}`,
      });
      expect(beyond.status).toBe(400);
      expect(beyond.body).toMatchObject({ error: 'invalid_scope', scope: 'orders:read' });
    },
  );

  test('a pushed authorization request (PAR) keeps offline_access too', async () => {
    const user = await createUser(t);
    const client = await createClient(t, {
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      first_party: true,
    });
    const config = await discover(t, client.client_id, client.client_secret);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT_URI,
      scope: DEMO_SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await browserLogin(url.href, user);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
    });
    expect(sorted(tokens.scope)).toEqual(await grantedToEditor());
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, {
      scope: DEMO_SCOPE,
    });
    expect(sorted(refreshed.scope)).toEqual(await grantedToEditor());
  });

  test('a login without offline_access reports exactly what it asked for', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const tokens = await pkceSignIn(config, user, { scope: 'openid email api' });
    expect(sorted(tokens.scope)).toEqual(sorted(`openid email ${await apiScopeOf(t, ['editor'])}`));
  });
});

describe('an unknown scope at /authorize', () => {
  const authorize = async (clientId: string, scope: string) => {
    const url = new URL(`${t.issuer}/authorize`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope,
      state: 's1',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    }).toString();
    return fetch(url, { redirect: 'manual' });
  };

  test('is refused with a redirect carrying error=invalid_scope (RFC 6749 §4.1.2.1)', async () => {
    const spa = await publicSpa(t);
    const res = await authorize(spa.client_id, 'openid api verify-unknown-x');
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    expect(location.href.startsWith(REDIRECT_URI)).toBe(true);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      error: 'invalid_scope',
      state: 's1',
      iss: t.issuer,
    });
    expect(location.searchParams.get('code')).toBeNull();
  });

  test('known scopes still start the sign-in', async () => {
    const spa = await publicSpa(t);
    const res = await authorize(spa.client_id, DEMO_SCOPE);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/interaction\//);
  });

  test('a device authorization with an unknown scope is 400 invalid_scope', async () => {
    const device = await createClient(t, {
      token_endpoint_auth_method: 'none',
      grant_types: ['device_code', 'refresh_token'],
    });
    const res = await fetch(`${t.issuer}/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: device.client_id,
        scope: 'openid api verify-unknown-x',
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_scope' });
  });

  test('a pushed request with an unknown scope is 400 invalid_scope', async () => {
    const client = await createClient(t, {
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
    });
    const res = await fetch(`${t.issuer}/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...basicAuth(client) },
      body: new URLSearchParams({
        client_id: client.client_id,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid verify-unknown-x',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_scope' });
  });
});
