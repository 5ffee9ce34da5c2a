import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  buildAuthorizeUrl,
  clientCredentials,
  createPkcePair,
  createState,
  deviceAuthorization,
  exchangeCode,
  OAuthError,
  pollDeviceToken,
  portcullisEndpoints,
  refreshToken,
  s256,
} from '../src/index.js';
import { json, recordingSleep, startServer } from './server.js';
import type { TestServer } from './server.js';

let server: TestServer;
afterEach(() => server?.close());

const form = (body: Buffer): Record<string, string> =>
  Object.fromEntries(new URLSearchParams(body.toString()));

describe('PKCE and state', () => {
  it('creates a 43..128-char unreserved verifier and its S256 challenge', async () => {
    const pairs = await Promise.all(Array.from({ length: 20 }, () => createPkcePair()));
    for (const { codeVerifier, codeChallenge, codeChallengeMethod } of pairs) {
      expect(codeVerifier).toMatch(/^[A-Za-z0-9\-._~]{43,128}$/);
      expect(codeChallenge).toBe(createHash('sha256').update(codeVerifier).digest('base64url'));
      expect(codeChallengeMethod).toBe('S256');
    }
    expect(new Set(pairs.map((p) => p.codeVerifier)).size).toBe(20);
  });

  it('matches the RFC 7636 Appendix B example transform', async () => {
    expect(await s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('creates unguessable, distinct states', () => {
    const a = createState();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createState()).not.toBe(a);
  });

  it('builds the /authorize URL of the code + PKCE flow', () => {
    const url = new URL(
      buildAuthorizeUrl({
        authUrl: 'http://localhost:4000/',
        clientId: 'spa',
        redirectUri: 'http://localhost:5173/callback',
        scope: 'openid profile email',
        state: 'st',
        codeChallenge: 'ch',
      }),
    );
    expect(url.origin + url.pathname).toBe('http://localhost:4000/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'spa',
      redirect_uri: 'http://localhost:5173/callback',
      scope: 'openid profile email',
      state: 'st',
      code_challenge: 'ch',
      code_challenge_method: 'S256',
    });
  });

  it('derives the authorization server endpoint paths', () => {
    expect(portcullisEndpoints('http://a:4000')).toMatchObject({
      tokenEndpoint: 'http://a:4000/token',
      deviceAuthorizationEndpoint: 'http://a:4000/device/auth',
      revocationEndpoint: 'http://a:4000/token/revocation',
      jwksUri: 'http://a:4000/.well-known/jwks.json',
    });
  });
});

describe('token endpoint', () => {
  const tokens = {
    access_token: 'at',
    token_type: 'Bearer',
    expires_in: 900,
    refresh_token: 'rt2',
  };

  it('clientCredentials authenticates with client_secret_basic', async () => {
    server = await startServer((_req, res) => json(res, 200, tokens));
    const result = await clientCredentials({
      tokenUrl: `${server.url}/token`,
      clientId: 'svc:1',
      clientSecret: 's3cr=t &',
      scope: 'orders:read',
      resource: 'http://localhost:3000',
    });

    expect(result).toEqual(tokens);
    const [req] = server.requests;
    expect(req).toMatchObject({ method: 'POST', url: '/token' });
    expect(req?.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    const basic = Buffer.from(
      req!.headers.authorization!.replace(/^Basic /, ''),
      'base64',
    ).toString();
    // RFC 6749 §2.3.1: both parts form-urlencoded before Base64.
    expect(basic).toBe('svc%3A1:s3cr%3Dt+%26');
    expect(form(req!.body)).toEqual({
      grant_type: 'client_credentials',
      scope: 'orders:read',
      resource: 'http://localhost:3000',
    });
  });

  it('exchangeCode sends code, redirect_uri, code_verifier and client_id for a public client', async () => {
    server = await startServer((_req, res) => json(res, 200, { ...tokens, id_token: 'idt' }));
    await exchangeCode({
      tokenUrl: `${server.url}/token`,
      clientId: 'spa',
      code: 'c0de',
      redirectUri: 'http://localhost:5173/cb',
      codeVerifier: 'v'.repeat(43),
    });
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(form(server.requests[0]!.body)).toEqual({
      grant_type: 'authorization_code',
      code: 'c0de',
      redirect_uri: 'http://localhost:5173/cb',
      code_verifier: 'v'.repeat(43),
      client_id: 'spa',
    });
  });

  it('refreshToken posts the refresh grant and surfaces invalid_grant as OAuthError', async () => {
    server = await startServer((_req, res, { n }) =>
      n === 1
        ? json(res, 200, tokens)
        : json(res, 400, { error: 'invalid_grant', error_description: 'grant revoked' }),
    );
    const options = { tokenUrl: `${server.url}/token`, clientId: 'spa', refreshToken: 'rt1' };
    await expect(refreshToken(options)).resolves.toMatchObject({ refresh_token: 'rt2' });
    expect(form(server.requests[0]!.body)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'rt1',
      client_id: 'spa',
    });

    const error = await refreshToken(options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({
      code: 'oauth',
      status: 400,
      error: 'invalid_grant',
      errorDescription: 'grant revoked',
    });
  });
});

describe('device flow', () => {
  it('starts at /device/auth', async () => {
    const answer = {
      device_code: 'dc',
      user_code: 'WDJB-MJHT',
      verification_uri: 'http://a/device',
      expires_in: 600,
      interval: 5,
    };
    server = await startServer((_req, res) => json(res, 200, answer));
    const result = await deviceAuthorization({
      deviceAuthorizationUrl: `${server.url}/device/auth`,
      clientId: 'tv',
      scope: 'openid offline_access',
    });
    expect(result).toEqual(answer);
    expect(server.requests[0]?.url).toBe('/device/auth');
    expect(form(server.requests[0]!.body)).toEqual({
      scope: 'openid offline_access',
      client_id: 'tv',
    });
  });

  it('polls through authorization_pending and slow_down (+5 s) to the tokens', async () => {
    const script = ['authorization_pending', 'slow_down', 'authorization_pending'];
    server = await startServer((_req, res, { n }) => {
      const error = script[n - 1];
      if (error) json(res, 400, { error });
      else json(res, 200, { access_token: 'at', token_type: 'Bearer' });
    });
    const { sleeps, sleep } = recordingSleep();

    const result = await pollDeviceToken({
      tokenUrl: `${server.url}/token`,
      clientId: 'tv',
      deviceCode: 'dc',
      interval: 2,
      expiresIn: 600,
      sleep,
    });

    expect(result).toEqual({ access_token: 'at', token_type: 'Bearer' });
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([2000, 2000, 7000, 7000]);
    expect(form(server.requests[0]!.body)).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: 'dc',
      client_id: 'tv',
    });
  });

  it.each(['expired_token', 'access_denied'])('stops on %s', async (code) => {
    server = await startServer((_req, res, { n }) =>
      json(res, 400, { error: n === 1 ? 'authorization_pending' : code }),
    );
    const error = await pollDeviceToken({
      tokenUrl: `${server.url}/token`,
      clientId: 'tv',
      deviceCode: 'dc',
      interval: 1,
      sleep: recordingSleep().sleep,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ error: code });
    expect(server.requests).toHaveLength(2);
  });

  it('stops locally once the device code has expired', async () => {
    server = await startServer((_req, res) => json(res, 400, { error: 'authorization_pending' }));
    let now = 0;
    const error = await pollDeviceToken({
      tokenUrl: `${server.url}/token`,
      clientId: 'tv',
      deviceCode: 'dc',
      interval: 5,
      expiresIn: 12,
      now: () => now,
      sleep: async (ms) => {
        now += ms;
      },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'expired_token' });
    expect(server.requests).toHaveLength(2);
  });
});
