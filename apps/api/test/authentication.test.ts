import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createSharedDenyList } from '@portcullis/db';
import { rethrow } from '@portcullis/testing';
import {
  claimsOf,
  startTestApi,
  type AuthServerTestApi,
  type IssuerTestApi,
  type TestApi,
} from './helpers/harness.js';

let api: AuthServerTestApi;
/**
 * A second API trusting the TEST ISSUER, for tokens the real auth server never issues:
 * an exp in the past, another audience or issuer, an id-token `typ`, an unknown `kid`.
 */
let forged: IssuerTestApi;
let token: string;
/** The real API's clock runs this many ms ahead of the wall clock (expiry test). */
let offset = 0;

beforeAll(async () => {
  api = await startTestApi({ deps: { now: () => Date.now() + offset } });
  forged = await startTestApi({ issuer: 'test' });
  token = await api.token('auth-user', ['viewer']);
});
afterAll(async () => {
  await api?.close();
  await forged?.close();
});

const get = (headers: Record<string, string>, path = '/orders', target: TestApi = api) =>
  target.request('GET', path, { headers });

/** 401 invalid_token saying `description` in the body and in the Bearer challenge. */
function expectInvalidToken(
  res: { status: number; headers: Headers; body: unknown },
  description: string,
) {
  expect(res.status).toBe(401);
  const challenge = `Bearer realm="portcullis", error="invalid_token", error_description="${description}", `;
  expect(res.headers.get('www-authenticate')?.slice(0, challenge.length)).toBe(challenge);
  // The reason, in a fixed text: no claim values, no library messages.
  expect(res.body).toEqual({ error: 'invalid_token', message: description });
}

/** Each token by name, with the description its refusal must give. */
function expectAllRefused(target: TestApi) {
  return async (bad: Record<string, [token: string, description: string]>) => {
    for (const [name, [value, description]] of Object.entries(bad)) {
      const res = await get({ authorization: `Bearer ${value}` }, '/orders', target);
      try {
        expectInvalidToken(res, description);
      } catch (error) {
        throw new Error(`${name}: ${(error as Error).message}`);
      }
    }
  };
}

const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

describe('authentication', () => {
  test('no credentials -> 401 with bare Bearer and DPoP challenges', async () => {
    const res = await get({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer realm="portcullis", scope="orders:read", resource_metadata="http://api.portcullis.test/.well-known/oauth-protected-resource", ' +
        'DPoP realm="portcullis", scope="orders:read", algs="ES256 ES384 EdDSA Ed25519 PS256 RS256", resource_metadata="http://api.portcullis.test/.well-known/oauth-protected-resource"',
    );
    expect(res.body).toEqual({ error: 'unauthenticated' });
  });

  test('a valid token is accepted; the scheme is case-insensitive', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      expect((await get({ authorization: `${scheme} ${token}` })).status).toBe(200);
    }
  });

  test('a real token altered after issue -> 401 invalid_token, saying what is wrong', async () => {
    const [header, payload, signature] = token.split('.');
    const { kid } = JSON.parse(Buffer.from(header!, 'base64url').toString()) as { kid: string };
    await expectAllRefused(api)({
      garbage: ['not.a.jwt', 'token malformed'],
      escalatedPayload: [
        `${header}.${b64({ ...claimsOf(token), roles: ['admin'] })}.${signature}`,
        'token signature not valid',
      ],
      algNone: [
        `${b64({ alg: 'none', typ: 'at+jwt', kid })}.${payload}.`,
        'token signing algorithm not allowed',
      ],
      truncatedSignature: [
        `${header}.${payload}.${signature!.slice(0, -4)}`,
        'token signature not valid',
      ],
      unknownApiKey: [`sk_live_${'A'.repeat(43)}`, 'token revoked'],
    });
  });

  test('a real token past its exp (the API clock moved ahead) -> 401 invalid_token', async () => {
    const fresh = await api.token('auth-expiring', ['viewer']);
    expect((await get({ authorization: `Bearer ${fresh}` })).status).toBe(200);
    // Beyond exp plus the verifier's 30 s clock tolerance.
    offset = (Number(claimsOf(fresh)['exp']) + 31) * 1000 - Date.now();
    try {
      expectInvalidToken(await get({ authorization: `Bearer ${fresh}` }), 'token expired');
    } finally {
      offset = 0;
    }
  });

  test('tokens the auth server never issues -> 401 invalid_token, each saying why (test issuer)', async () => {
    const issuer = forged.issuer;
    const sub = 'auth-user';
    await expectAllRefused(forged)({
      expired: [
        await issuer.tokenFor({ sub, roles: ['viewer'], expiresIn: -120 }),
        'token expired',
      ],
      wrongAudience: [
        await issuer.tokenFor({ sub, roles: ['viewer'], claims: { aud: 'http://elsewhere' } }),
        'token audience is not this API',
      ],
      wrongIssuer: [
        await issuer.tokenFor({ sub, roles: ['viewer'], claims: { iss: 'http://evil.test' } }),
        'token issuer unknown',
      ],
      idTokenTyp: [
        await issuer.tokenFor({ sub, roles: ['viewer'], header: { typ: 'JWT' } }),
        'token is not an access token (typ at+jwt)',
      ],
      unknownKid: [
        await issuer.tokenFor({ sub, roles: ['viewer'], header: { kid: 'nope' } }),
        'token signing key unknown',
      ],
    });
    // The same issuer's well-formed token is accepted: the refusals are about the claims.
    const good = await issuer.tokenFor({ sub, roles: ['viewer'] });
    expect((await get({ authorization: `Bearer ${good}` }, '/orders', forged)).status).toBe(200);
  });

  test('another scheme or a malformed header -> 401 with a challenge', async () => {
    for (const value of ['Basic dXNlcjpwYXNz', 'Bearer', `Bearer  ${token}`, token]) {
      const res = await get({ authorization: value });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(
        /^Bearer .*error="invalid_(token|request)"/,
      );
    }
  });

  test('credentials in the query string are refused with 400', async () => {
    const res = await api.request('GET', `/orders?access_token=${token}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    const both = await api.request('GET', `/orders?access_token=${token}`, { token });
    expect(both.status).toBe(400);
  });

  test('a revoked grant (deny list) is refused at once', async () => {
    const victim = await api.token('auth-revoked', ['viewer']);
    const grantId = String(claimsOf(victim)['grant_id']);
    expect(grantId).not.toBe('undefined');
    expect((await get({ authorization: `Bearer ${victim}` })).status).toBe(200);
    const denyList = createSharedDenyList({ db: api.database.db, onError: rethrow });
    await denyList.denyGrant(grantId, Math.floor(Date.now() / 1000) + 3600);
    await denyList.close();
    expectInvalidToken(await get({ authorization: `Bearer ${victim}` }), 'token revoked');
    // Another user's grant is untouched.
    expect((await get({ authorization: `Bearer ${token}` })).status).toBe(200);
  });

  test('public endpoints need no token', async () => {
    expect((await get({}, '/healthz')).body).toEqual({ status: 'ok' });
    expect((await get({}, '/readyz')).body).toEqual({ status: 'ready', database: 'ok' });
    expect((await get({}, '/openapi.json')).status).toBe(200);
  });
});
