import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
} from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createClient,
  createUser,
  decodeJwt,
  discover,
  REDIRECT_URI,
} from '@portcullis/testing';

// README "FAPI 2.0": a client registered with "fapi": "2.0".

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface Key {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}
async function clientKey(alg: 'ES256' | 'RS256', kid: string): Promise<Key> {
  const pair = await generateKeyPair(alg, { extractable: true });
  return { ...pair, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg } };
}

let t: TestAuthServer;
let ec: Key;
let rsa: Key;
beforeAll(async () => {
  t = await startTestAuthServer();
  // ES256 ID tokens need an ES256 key that signs (the default is RS256).
  const rotated = await t.admin('POST', '/admin/signing-keys', { alg: 'ES256', activate: 'now' });
  if (rotated.status !== 201) throw new Error(`rotation: ${rotated.status}`);
  ec = await clientKey('ES256', 'ec-1');
  rsa = await clientKey('RS256', 'rsa-1');
});
afterAll(async () => {
  await t?.close();
});

/** A FAPI 2.0 web client's registration; `extra` overrides it. */
const fapiMetadata = (extra: Record<string, unknown> = {}) => ({
  client_id: `fapi-${randomUUID()}`,
  fapi: '2.0',
  token_endpoint_auth_method: 'private_key_jwt',
  jwks: { keys: [ec.jwk, rsa.jwk] },
  redirect_uris: [REDIRECT_URI],
  grant_types: ['authorization_code', 'refresh_token'],
  first_party: true,
  ...extra,
});
const fapiClient = (extra: Record<string, unknown> = {}) =>
  t.admin('POST', '/admin/clients', fapiMetadata(extra));

const configFor = (clientId: string) =>
  oidc.discovery(
    new URL(t.issuer),
    clientId,
    { id_token_signed_response_alg: 'ES256' },
    oidc.PrivateKeyJwt({ key: ec.privateKey, kid: 'ec-1' }),
    { execute: [oidc.allowInsecureRequests] },
  );

async function pkceParams() {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  return {
    verifier,
    state,
    params: {
      redirect_uri: REDIRECT_URI,
      scope: 'openid api offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    },
  };
}

/** A client assertion for the PAR endpoint, signed with `key` as `alg`. */
function assertion(clientId: string, key: Key) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: clientId,
    sub: clientId,
    aud: t.issuer,
    jti: randomUUID(),
    exp: now + 60,
  })
    .setProtectedHeader({ alg: String(key.jwk.alg), kid: String(key.jwk.kid) })
    .setIssuedAt(now)
    .sign(key.privateKey);
}

async function push(clientId: string, key: Key, params: Record<string, string>) {
  const res = await fetch(`${t.issuer}/request`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await assertion(clientId, key),
      ...params,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('FAPI 2.0 clients at the admin API', () => {
  test('refused while no ES256 key signs ID tokens, with what to do', async () => {
    const rsaOnly = await startTestAuthServer();
    try {
      const res = await rsaOnly.admin('POST', '/admin/clients', fapiMetadata());
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_client_metadata',
        message: expect.stringContaining('signing-key:rotate --alg ES256'),
      });
    } finally {
      await rsaOnly.close();
    }
  });

  test('registered with PAR, DPoP and ES256 implied', async () => {
    const res = await fapiClient();
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      fapi: '2.0',
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      require_pushed_authorization_requests: true,
      dpop_bound_access_tokens: true,
      id_token_signed_response_alg: 'ES256',
    });
    expect(res.body['client_secret']).toBeUndefined();
  });

  test.each([
    [
      'a client secret',
      { token_endpoint_auth_method: 'client_secret_basic', jwks: undefined },
      'private_key_jwt',
    ],
    [
      'no PAR',
      { require_pushed_authorization_requests: false },
      'require_pushed_authorization_requests',
    ],
    ['no DPoP', { dpop_bound_access_tokens: false }, 'dpop_bound_access_tokens'],
    ['RS256 assertions', { token_endpoint_auth_signing_alg: 'RS256' }, 'ES256 or PS256'],
    ['the device flow', { grant_types: ['device_code'], redirect_uris: [] }, 'device_code'],
    ['an http redirect', { redirect_uris: ['http://app.example.com/cb'] }, 'must be https'],
  ])('%s: 400 invalid_client_metadata naming the rule', async (_name, extra, named) => {
    const res = await fapiClient(extra);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
    expect(res.body.message).toMatch(/^FAPI 2\.0: /);
    expect(res.body.message).toContain(named);
  });

  test('another profile name is refused', async () => {
    const res = await fapiClient({ fapi: '1.0' });
    expect(res.status).toBe(422);
    expect(res.body.fields.fapi).toBeDefined();
  });
});

/**
 * A token request of a DPoP-bound client without a proof; the code or refresh token stays
 * usable, so the same request with a proof succeeding shows what was missing.
 */
const NO_DPOP = { status: 400, error: 'invalid_grant' };

describe('a FAPI 2.0 flow with openid-client 6', () => {
  test('PAR + private_key_jwt + DPoP + PKCE S256: iss in the response, ES256 ID token, bound tokens', async () => {
    const client = (await fapiClient()).body;
    const user = await createUser(t);
    const config = await configFor(client.client_id);
    const dpopKey = await generateKeyPair('ES256');
    const DPoP = oidc.getDPoPHandle(config, dpopKey);
    const { verifier, state, params } = await pkceParams();

    const url = await oidc.buildAuthorizationUrlWithPAR(config, params, { DPoP });
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const callback = await browserLogin(url.href, user);
    // RFC 9207: the response names its issuer.
    expect(callback.searchParams.get('iss')).toBe(t.issuer);
    // The code lives 60 s at most.
    const stored = await t.database
      .db('oidc_payloads')
      .where({ type: 'AuthorizationCode', id: callback.searchParams.get('code') })
      .first();
    expect(stored.payload.exp - stored.payload.iat).toBeGreaterThan(0);
    expect(stored.payload.exp - stored.payload.iat).toBeLessThanOrEqual(60);

    // The code exchange without a DPoP proof is refused; with one, tokens bound to the key.
    await expect(
      oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      }),
    ).rejects.toMatchObject(NO_DPOP);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state },
      undefined,
      { DPoP },
    );
    expect(tokens.token_type).toBe('dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(dpopKey.publicKey));
    expect(decodeJwt(tokens.access_token).payload.cnf).toEqual({ jkt });
    expect(decodeJwt(tokens.id_token!).header.alg).toBe('ES256');
    expect(decodeJwt(tokens.access_token).header.alg).toBe('ES256');
    expect(tokens.claims()?.sub).toBe(user.id);

    // Refresh: only with a proof of the same key.
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject(
      NO_DPOP,
    );
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP,
    });
    expect(decodeJwt(refreshed.access_token).payload.cnf).toEqual({ jkt });
  });

  test('a plain /authorize without PAR is refused with invalid_request', async () => {
    const client = (await fapiClient()).body;
    const config = await configFor(client.client_id);
    const { params } = await pkceParams();
    const plain = oidc.buildAuthorizationUrl(config, params);
    const res = await browser().get(plain.href);
    const location = res.headers.get('location');
    const error = location
      ? new URL(location, plain).searchParams.get('error')
      : /invalid_[a-z_]+/.exec(await res.text())?.[0];
    expect(error).toBe('invalid_request');
  });

  test('an RS256 client assertion is refused with invalid_client; ES256 is accepted', async () => {
    const client = (await fapiClient()).body;
    const { params } = await pkceParams();
    const refused = await push(client.client_id, rsa, params);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
    expect(refused.body['request_uri']).toBeUndefined();
    const accepted = await push(client.client_id, ec, params);
    expect(accepted.status).toBe(201);
    expect(accepted.body['request_uri']).toEqual(expect.any(String));
  });

  test('a pushed request without PKCE is refused with invalid_request', async () => {
    const client = (await fapiClient()).body;
    const { params } = await pkceParams();
    const { code_challenge: _c, code_challenge_method: _m, ...withoutPkce } = params;
    const res = await push(client.client_id, ec, withoutPkce);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('after an RS256 key becomes the newest signing key', () => {
  test('a FAPI 2.0 client’s access and ID tokens stay ES256; other clients’ access tokens are RS256', async () => {
    const client = (await fapiClient()).body;
    const rotated = await t.admin('POST', '/admin/signing-keys', {
      alg: 'RS256',
      activate: 'now',
    });
    expect(rotated.status).toBe(201);
    const other = await createClient(t, { grant_types: ['client_credentials'], roles: ['viewer'] });
    const otherConfig = await discover(t, other.client_id, other.client_secret!);
    const otherToken = await oidc.clientCredentialsGrant(otherConfig, { scope: 'api' });
    expect(decodeJwt(otherToken.access_token).header).toMatchObject({
      alg: 'RS256',
      kid: rotated.body.kid,
    });

    const user = await createUser(t);
    const config = await configFor(client.client_id);
    const DPoP = oidc.getDPoPHandle(config, await generateKeyPair('ES256'));
    const { verifier, state, params } = await pkceParams();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, params, { DPoP });
    const callback = await browserLogin(url.href, user);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state },
      undefined,
      { DPoP },
    );
    expect(decodeJwt(tokens.access_token).header.alg).toBe('ES256');
    expect(decodeJwt(tokens.id_token!).header.alg).toBe('ES256');
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP,
    });
    expect(decodeJwt(refreshed.access_token).header.alg).toBe('ES256');
  });
});
