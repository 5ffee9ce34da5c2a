import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  apiScopeOf,
  browserLogin,
  createUser,
  decodeJwt,
  discover,
  type JsonBody,
  pkceSignIn,
  publicSpa,
  REDIRECT_URI,
  tokenRequest,
} from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

describe('authorization code + PKCE', () => {
  test('happy path: access, refresh and ID tokens; the access token is an RFC 9068 JWT', async () => {
    const user = await createUser(t, ['editor']);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const tokens = await pkceSignIn(config, user);

    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.id_token).toBeTruthy();
    const { header, payload } = decodeJwt(tokens.access_token);
    expect(header.typ).toBe('at+jwt');
    expect(header.alg).toBe('RS256');
    expect(typeof header.kid).toBe('string');
    const jwks = createRemoteJWKSet(new URL(`${t.issuer}/.well-known/jwks.json`));
    const verified = await jwtVerify(tokens.access_token, jwks, {
      issuer: t.issuer,
      audience: t.apiAudience,
      typ: 'at+jwt',
    });
    expect(verified.payload).toMatchObject({
      iss: t.issuer,
      aud: t.apiAudience,
      sub: user.id,
      client_id: client.client_id,
      scope: await apiScopeOf(t, ['editor']),
      roles: ['editor'],
      email: user.email,
    });
    expect(typeof payload.jti).toBe('string');
    expect(typeof payload.grant_id).toBe('string');
    expect(payload.exp - payload.iat).toBe(900);
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(user.id);
  });
});

async function authorizeUrl(clientId: string, params: Record<string, string>) {
  const url = new URL(`${t.issuer}/authorize`);
  const all: Record<string, string> = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: 'openid api',
    state: 's1',
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== '') url.searchParams.set(k, v);
  return url.href;
}

async function codeFor(clientId: string, user: { email: string; password: string }) {
  const verifier = oidc.randomPKCECodeVerifier();
  const challenge = await oidc.calculatePKCECodeChallenge(verifier);
  const callback = await browserLogin(
    await authorizeUrl(clientId, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'openid api offline_access',
    }),
    user,
  );
  expect(callback.searchParams.get('iss')).toBe(t.issuer);
  return { code: callback.searchParams.get('code')!, verifier };
}

const redeem = (clientId: string, code: string, verifier: string, redirectUri = REDIRECT_URI) =>
  tokenRequest(t, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
  });

describe('PKCE and code refusals', () => {
  test('discovery advertises only code, S256 and iss in the authorization response', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const meta = (await res.json()) as JsonBody;
    expect(meta.issuer).toBe(t.issuer);
    expect(meta.response_types_supported).toEqual(['code']);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.authorization_response_iss_parameter_supported).toBe(true);
    expect(meta.jwks_uri).toBe(`${t.issuer}/.well-known/jwks.json`);
    expect(meta.authorization_endpoint).toBe(`${t.issuer}/authorize`);
    expect(meta.device_authorization_endpoint).toBe(`${t.issuer}/device/auth`);
    expect(meta.revocation_endpoint).toBe(`${t.issuer}/token/revocation`);
    expect(meta.userinfo_endpoint).toBe(`${t.issuer}/me`);
    expect(meta.grant_types_supported).not.toContain('implicit');
    expect(meta.grant_types_supported).not.toContain('password');
  });

  test.each([
    ['plain challenge', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }],
    ['missing challenge', {}],
    [
      'implicit response type',
      { response_type: 'token', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' },
    ],
  ])('%s is refused', async (_name, params) => {
    const client = await publicSpa(t);
    const res = await fetch(
      await authorizeUrl(client.client_id, params as Record<string, string>),
      { redirect: 'manual' },
    );
    expect([302, 303, 400]).toContain(res.status);
    const location = res.headers.get('location');
    if (location) {
      const u = new URL(location);
      const error = (
        u.searchParams.get('error') ? u.searchParams : new URLSearchParams(u.hash.slice(1))
      ).get('error');
      expect(['invalid_request', 'unsupported_response_type']).toContain(error);
    }
  });

  test('unregistered redirect_uri is refused without redirecting', async () => {
    const client = await publicSpa(t);
    const res = await fetch(
      await authorizeUrl(client.client_id, {
        redirect_uri: 'http://localhost:5173/callback/evil',
        code_challenge: 'a'.repeat(43),
        code_challenge_method: 'S256',
      }),
      { redirect: 'manual' },
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
  });

  test('wrong verifier and wrong redirect_uri at the token endpoint are invalid_grant, each saying so', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const a = await codeFor(client.client_id, user);
    const wrong = await redeem(client.client_id, a.code, oidc.randomPKCECodeVerifier());
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({
      error: 'invalid_grant',
      error_description:
        'code_verifier does not match the code_challenge of the authorization request',
    });

    const b = await codeFor(client.client_id, user);
    const mismatch = await redeem(
      client.client_id,
      b.code,
      b.verifier,
      'http://localhost:5173/other',
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toEqual({
      error: 'invalid_grant',
      error_description: 'redirect_uri is not the one of the authorization request',
    });
  });

  test('an expired code and an unknown one are invalid_grant, each saying so', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const { code, verifier } = await codeFor(client.client_id, user);
    // As if its 60 seconds had passed (the purge has not run yet).
    const past = Math.floor(Date.now() / 1000) - 1;
    const expired = await t.database
      .db('oidc_payloads')
      .where({ type: 'AuthorizationCode', id: code })
      .update({
        payload: t.database.db.raw(`jsonb_set(payload, '{exp}', to_jsonb(?::int))`, [past]),
        expires_at: new Date(past * 1000),
      });
    expect(expired).toBe(1);
    const res = await redeem(client.client_id, code, verifier);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'authorization code expired',
    });
    const unknown = await redeem(client.client_id, 'no-such-code', verifier);
    expect(unknown.body).toEqual({
      error: 'invalid_grant',
      error_description: 'authorization code unknown',
    });
  });

  test('a code is single use: the second redemption revokes the grant', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const { code, verifier } = await codeFor(client.client_id, user);
    const first = await redeem(client.client_id, code, verifier);
    expect(first.status).toBe(200);
    const second = await redeem(client.client_id, code, verifier);
    expect(second.status).toBe(400);
    expect(second.body).toEqual({
      error: 'invalid_grant',
      error_description: 'authorization code already used; the tokens issued for it are revoked',
    });
    await t.server.settle();
    const refresh = await tokenRequest(t, {
      grant_type: 'refresh_token',
      client_id: client.client_id,
      refresh_token: first.body.refresh_token,
    });
    expect(refresh.body.error).toBe('invalid_grant');
    const grantId = decodeJwt(first.body.access_token).payload.grant_id;
    const denied = await t.database.db('revocations').where({ kind: 'grant', value: grantId });
    expect(denied.length).toBeGreaterThan(0);
  });

  test('10 parallel redemptions of one code: exactly one succeeds', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const { code, verifier } = await codeFor(client.client_id, user);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => redeem(client.client_id, code, verifier)),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200))
      expect(r.body.error).toBe('invalid_grant');
    // The loser revoked the grant: the winner's refresh token is refused too.
    await t.server.settle();
    const refresh = await tokenRequest(t, {
      grant_type: 'refresh_token',
      client_id: client.client_id,
      refresh_token: ok[0]!.body.refresh_token,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });
});
