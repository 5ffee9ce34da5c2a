import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createClient,
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  denySubjectElsewhere,
  until,
} from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const me = (token: string, scheme = 'Bearer') =>
  fetch(`${t.issuer}/me`, { headers: { authorization: `${scheme} ${token}` } });

/** The error a refused /me names in WWW-Authenticate (RFC 6750 §3). */
async function refusal(res: Response) {
  const challenge = res.headers.get('www-authenticate') ?? '';
  return { status: res.status, error: /error="([^"]+)"/.exec(challenge)?.[1] };
}

/** An access token signed by the server's own current key, with any claims: for refusals. */
async function signedByServer(payload: Record<string, unknown>) {
  const { kid, alg } = t.server.host.keys.current;
  const jwk = t.server.host.keys.jwks.find((k) => (k as { kid?: string }).kid === kid)!;
  const key = await importJWK(jwk as JWK, alg);
  return new SignJWT(payload).setProtectedHeader({ alg, kid, typ: 'at+jwt' }).sign(key);
}

/** An access token another server signed with a key of its own, naming `kid` for it. */
async function signedElsewhere(payload: Record<string, unknown>, kid: string) {
  const { alg } = t.server.host.keys.current;
  const { privateKey } = await generateKeyPair(alg);
  return new SignJWT(payload).setProtectedHeader({ alg, kid, typ: 'at+jwt' }).sign(privateKey);
}

async function signedInUser(scope = 'openid profile email offline_access api') {
  const user = await createUser(t);
  const spa = await publicSpa(t);
  const config = await discover(t, spa.client_id);
  const tokens = await pkceSignIn(config, user, { scope });
  return { user, spa, config, tokens };
}

describe('userinfo (/me) with the access token of the code flow', () => {
  test("openid-client's fetchUserInfo accepts the API access token", async () => {
    const { user, config, tokens } = await signedInUser();
    expect(decodeJwt(tokens.access_token).payload.aud).toBe(t.apiAudience);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toEqual({
      sub: user.id,
      email: user.email,
      email_verified: expect.any(Boolean),
      name: 'Test User',
    });
  });

  test('only the claims of the granted scopes: openid and email, no profile', async () => {
    const { user, tokens } = await signedInUser('openid email api');
    const res = await me(tokens.access_token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ sub: user.id, email: user.email });
    expect(body).not.toHaveProperty('name');
  });

  test('a client-credentials token (no user) is refused with invalid_token', async () => {
    const service = await createClient(t, {
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const config = await discover(t, service.client_id, service.client_secret);
    const { access_token } = await oidc.clientCredentialsGrant(config, { scope: 'api' });
    expect(await refusal(await me(access_token))).toEqual({ status: 401, error: 'invalid_token' });
  });

  test('a DPoP-bound token needs its proof; as Bearer or with another key it is refused', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const tokens = await pkceSignIn(config, user, { DPoP });
    expect(decodeJwt(tokens.access_token).payload.cnf).toBeDefined();
    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id, { DPoP });
    expect(info.sub).toBe(user.id);

    expect(await refusal(await me(tokens.access_token))).toEqual({
      status: 401,
      error: 'invalid_token',
    });
    const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    await expect(
      oidc.fetchUserInfo(config, tokens.access_token, user.id, { DPoP: other }),
    ).rejects.toMatchObject({
      cause: [{ scheme: 'dpop', parameters: expect.objectContaining({ error: 'invalid_token' }) }],
    });
  });

  test('refused with invalid_token: another issuer, another audience, expired, forged, revoked', async () => {
    const { user, spa, tokens } = await signedInUser();
    const claims = decodeJwt(tokens.access_token).payload as Record<string, unknown>;
    const now = Math.floor(Date.now() / 1000);
    const cases: Record<string, string> = {
      'another issuer': await signedByServer({ ...claims, iss: 'https://elsewhere.example' }),
      'another issuer, with its own key': await signedElsewhere(
        { ...claims, iss: 'https://elsewhere.example' },
        'elsewhere-key-1',
      ),
      'another key naming this issuer and its current kid': await signedElsewhere(
        claims,
        t.server.host.keys.current.kid,
      ),
      'an audience the server does not own': await signedByServer({
        ...claims,
        aud: 'https://other-api.example',
      }),
      expired: await signedByServer({ ...claims, iat: now - 1000, exp: now - 100 }),
      forged: `${tokens.access_token.slice(0, -4)}AAAA`,
    };
    for (const [label, token] of Object.entries(cases)) {
      expect({ label, ...(await refusal(await me(token))) }).toEqual({
        label,
        status: 401,
        error: 'invalid_token',
      });
    }

    // Revoked: the refresh token's revocation ends the grant (and deny-lists it).
    expect((await me(tokens.access_token)).status).toBe(200);
    const revoked = await fetch(`${t.issuer}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: spa.client_id, token: tokens.refresh_token! }),
    });
    expect(revoked.status).toBe(200);
    await t.server.settle();
    expect(await refusal(await me(tokens.access_token))).toEqual({
      status: 401,
      error: 'invalid_token',
    });
    expect(user.id).toBe(claims['sub']);
  });

  test('refused with invalid_token after a logout everywhere (the deny list), its grant still there', async () => {
    const { user, tokens } = await signedInUser();
    expect((await me(tokens.access_token)).status).toBe(200);
    // As the API's POST /logout/all writes it, through the revocations table.
    await denySubjectElsewhere(t.database.db, user.id, 86_400);
    // The auth server learns of it by its own poll of the table.
    await until(
      async () => (await me(tokens.access_token)).status,
      (status) => status === 401,
      20_000,
    );
    expect(await refusal(await me(tokens.access_token))).toEqual({
      status: 401,
      error: 'invalid_token',
    });
  });

  test('an opaque userinfo token (a refresh narrowed to OIDC scopes) still works', async () => {
    const { user, config, tokens } = await signedInUser('openid email offline_access api');
    const userinfo = await oidc.refreshTokenGrant(config, tokens.refresh_token!, {
      scope: 'openid email',
    });
    expect(userinfo.access_token.split('.')).toHaveLength(1); // opaque
    const res = await me(userinfo.access_token);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ sub: user.id, email: user.email });

    // The rotated refresh token still carries the whole grant: API tokens again.
    const again = await oidc.refreshTokenGrant(config, userinfo.refresh_token!);
    expect(decodeJwt(again.access_token).payload).toMatchObject({
      aud: t.apiAudience,
      scope: expect.stringContaining('api'),
    });
  });
});
