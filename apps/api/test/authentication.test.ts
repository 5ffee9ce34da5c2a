import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDenyList } from '@portcullis/claims';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  token = await api.token('auth-user', ['viewer']);
});
afterAll(() => api.close());

const get = (headers: Record<string, string>, path = '/orders') =>
  api.request('GET', path, { headers });

function expectInvalidToken(res: { status: number; headers: Headers; text: string }) {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  // Nothing about why: no claim names, no library messages.
  expect(res.text).toBe('{"error":"invalid_token"}');
}

describe('authentication', () => {
  test('no credentials -> 401 with a bare Bearer challenge', async () => {
    const res = await get({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="portcullis"');
    expect(res.body).toEqual({ error: 'unauthenticated' });
  });

  test('a valid token is accepted; the scheme is case-insensitive', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      expect((await get({ authorization: `${scheme} ${token}` })).status).toBe(200);
    }
  });

  test('refused tokens -> 401 invalid_token, all alike', async () => {
    const issuer = api.issuer;
    const [header, payload] = token.split('.');
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: issuer.issuer,
      aud: issuer.audience,
      sub: 'x',
      client_id: 'c',
      scope: 'api',
      roles: ['admin'],
      iat: now,
      exp: now + 600,
      jti: 'j',
    };
    const kid = JSON.parse(Buffer.from(header!, 'base64url').toString()).kid as string;
    const bad = {
      garbage: 'not.a.jwt',
      tamperedPayload: `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'auth-user' })).toString('base64url')}.${token.split('.')[2]}`,
      algNone: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid })).toString('base64url')}.${payload}.`,
      expired: await issuer.tokenFor({ sub: 'auth-user', roles: ['viewer'], expiresIn: -120 }),
      wrongAudience: await issuer.tokenFor({
        sub: 'auth-user',
        roles: ['viewer'],
        claims: { aud: 'http://elsewhere' },
      }),
      wrongIssuer: await issuer.tokenFor({
        sub: 'auth-user',
        roles: ['viewer'],
        claims: { iss: 'http://evil.test' },
      }),
      idTokenTyp: await issuer.tokenFor({
        sub: 'auth-user',
        roles: ['viewer'],
        header: { typ: 'JWT' },
      }),
      unknownKid: await issuer.tokenFor({
        sub: 'auth-user',
        roles: ['viewer'],
        header: { kid: 'nope' },
      }),
      apiKeyWithoutResolver: `sk_live_${'A'.repeat(43)}`,
    };
    for (const [name, value] of Object.entries(bad)) {
      const res = await get({ authorization: `Bearer ${value}` });
      try {
        expectInvalidToken(res);
      } catch (error) {
        throw new Error(`${name}: ${(error as Error).message}`);
      }
    }
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

  test('a revoked token (deny list) is refused at once', async () => {
    const victim = await api.issuer.tokenFor({
      sub: 'auth-user',
      roles: ['viewer'],
      grantId: 'grant-1',
    });
    expect((await get({ authorization: `Bearer ${victim}` })).status).toBe(200);
    const denyList = createDenyList({ db: api.database.db });
    await denyList.denyGrant('grant-1', Math.floor(Date.now() / 1000) + 3600);
    await denyList.close();
    expectInvalidToken(await get({ authorization: `Bearer ${victim}` }));
  });

  test('public endpoints need no token', async () => {
    expect((await get({}, '/healthz')).body).toEqual({ status: 'ok' });
    expect((await get({}, '/readyz')).body).toEqual({ status: 'ready', database: 'ok' });
    expect((await get({}, '/openapi.json')).status).toBe(200);
  });
});
