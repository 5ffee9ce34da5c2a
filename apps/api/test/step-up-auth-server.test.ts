/**
 * Step-up with the REAL auth server (README "Step-up", "Multi-factor sign-in"): its
 * password-only access token is refused on a step-up route with the RFC 9470 challenge,
 * and the token of a sign-in with the second factor (an authenticator app, its codes
 * computed here) is accepted. The other step-up answers are in step-up.test.ts.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { ACR } from '@portcullis/claims';
import * as oidc from 'openid-client';
import {
  browser,
  browserLogin,
  enrolTotp,
  REDIRECT_URI,
  submitSecondFactor,
  totpCode,
} from '@portcullis/testing';
import { makeUser, PASSWORD } from './helpers/factories.js';
import { claimsOf, startTestApi, type AuthServerTestApi } from './helpers/harness.js';

let api: AuthServerTestApi;
beforeAll(async () => {
  api = await startTestApi({ env: { STEP_UP: 'required', STEP_UP_MAX_AGE: '300' } });
});
afterAll(() => api.close());

/** A first-party public client of the real server, registered through its admin API. */
async function spaClient(): Promise<oidc.Configuration> {
  const res = await fetch(`${api.auth.adminUrl}/admin/clients`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.auth.adminToken}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
      first_party: true,
    }),
  });
  const { client_id } = (await res.json()) as { client_id: string };
  return oidc.discovery(new URL(api.auth.issuer), client_id, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
}

test("POST /api-keys refuses the real server's password-only token and accepts it after the second factor", async () => {
  const owner = await makeUser(api.database.db, ['admin']);
  const user = { email: owner.email, password: PASSWORD };
  const body = { name: 'ops', permissions: ['orders:read'] };

  const password = await api.tokenFor(owner);
  expect(claimsOf(password)).toMatchObject({ acr: ACR.password, amr: ['pwd'] });
  const refused = await api.request('POST', '/api-keys', { token: password, body });
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toMatch(
    new RegExp(
      `^Bearer realm="portcullis", error="insufficient_user_authentication", ` +
        `error_description="[^"]+", acr_values="${ACR.mfa}", max_age=300`,
    ),
  );
  expect(refused.body).toMatchObject({
    error: 'insufficient_user_authentication',
    acr_values: ACR.mfa,
    max_age: 300,
  });

  // The user enrols an authenticator app, then signs in again with it (the sign-in the
  // challenge asks for: acr_values and max_age as the client SDK passes them on).
  const issuer = { issuer: api.auth.issuer };
  const { secret } = await enrolTotp(issuer, browser(), user);
  const config = await spaClient();
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid api',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    acr_values: ACR.mfa,
    max_age: '300',
  });
  const b = browser();
  const factorPage = await browserLogin(url.href, user, { b });
  // The enrolment used this period's code: the next period's is accepted once.
  const callback = await submitSecondFactor(issuer, b, factorPage, 'totp', {
    code: totpCode(secret, Date.now() + 30_000),
  });
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
  });
  expect(claimsOf(tokens.access_token)).toMatchObject({
    acr: ACR.mfa,
    amr: ['pwd', 'otp', 'mfa'],
  });
  const created = await api.request('POST', '/api-keys', { token: tokens.access_token, body });
  expect(created.status).toBe(201);
});
