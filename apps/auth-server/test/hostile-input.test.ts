/**
 * A NUL character (which PostgreSQL refuses in text) anywhere a client controls is an
 * OAuth error or a 400 page, never server_error: at the app's edge (path and query), in
 * the sign-in form, and at the oidc-provider adapter for bodies oidc-provider parses.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import {
  browser,
  createClient,
  discover,
  REDIRECT_URI,
  startTestAuthServer,
  type TestAuthServer,
  tokenRequest,
} from '@portcullis/testing';

let t: TestAuthServer;
let spa: { client_id: string };
let service: { client_id: string; client_secret?: string };
beforeAll(async () => {
  t = await startTestAuthServer();
  spa = await createClient(t, {
    token_endpoint_auth_method: 'none',
    redirect_uris: [REDIRECT_URI],
    grant_types: [
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ],
  });
  service = await createClient(t, {
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials', 'refresh_token'],
    redirect_uris: [],
    response_types: [],
  });
});
afterAll(async () => {
  await t?.close();
});

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
  body: new URLSearchParams(fields).toString(),
});

async function json(res: Response) {
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

function expectOAuthRefusal(reply: { status: number; body: unknown }) {
  expect([400, 401]).toContain(reply.status);
  expect(reply.body).toEqual({
    error: expect.stringMatching(/^invalid_(request|client|grant)$/),
    error_description: expect.any(String),
  });
}

describe('a NUL in client_id (unauthenticated)', () => {
  test('POST /token -> invalid_request or invalid_client', async () => {
    expectOAuthRefusal(
      await tokenRequest(t, { grant_type: 'client_credentials', client_id: 'a\u0000b' }),
    );
  });

  test('POST /device/auth', async () => {
    expectOAuthRefusal(
      await json(await fetch(`${t.server.url}/device/auth`, form({ client_id: 'a\u0000b' }))),
    );
  });

  test('GET /authorize', async () => {
    const query = new URLSearchParams({
      client_id: 'a\u0000b',
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
    });
    const res = await fetch(`${t.server.url}/authorize?${query}`, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
    });
    expectOAuthRefusal(await json(res));
  });
});

describe('a NUL in bodies oidc-provider parses and stores', () => {
  test('a refresh token with a NUL -> invalid_grant', async () => {
    const basic = Buffer.from(`${service.client_id}:${service.client_secret}`).toString('base64');
    const reply = await tokenRequest(
      t,
      { grant_type: 'refresh_token', refresh_token: 'abc\u0000' },
      { authorization: `Basic ${basic}` },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_grant');
  });

  test('a NUL in a parameter that is stored (device authorization) -> invalid_request', async () => {
    const reply = await json(
      await fetch(
        `${t.server.url}/device/auth`,
        form({ client_id: spa.client_id, scope: 'openid', acr_values: 'x\u0000' }),
      ),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_request');
  });

  test('a NUL in the user code typed on /device -> not a 500', async () => {
    const b = browser();
    const page = await b.get(`${t.server.url}/device`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const res = await b.postForm(`${t.server.url}/device`, { xsrf, user_code: 'AB\u0000CD' });
    expect(res.status).toBeLessThan(500);
  });
});

describe('the sign-in form', () => {
  test('an email with a NUL -> a 400 page, not server_error', async () => {
    const b = browser();
    const config = await discover(t, spa.client_id);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const first = await b.get(url.href);
    const interaction = new URL(first.headers.get('location')!, t.issuer).href;
    const html = await (await b.get(interaction)).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const res = await b.postForm(`${interaction}/login`, {
      csrf,
      email: '\u0000',
      password: 'whatever',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).not.toMatch(/went wrong/);
  });
});

describe('found by the fuzz test', () => {
  test('device pages without the cookie they need (resume, session) -> 400 page', async () => {
    for (const [method, path] of [
      ['GET', '/device/auth'],
      ['GET', '/device/confirm'],
      ['HEAD', '/DEVICE/AUTH'],
      ['POST', '/device'],
    ] as const) {
      const res = await fetch(`${t.server.url}${path}`, { method, redirect: 'manual' });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
    }
  });

  test('device pages with a made-up session cookie -> 4xx page, never a 500', async () => {
    for (const [method, path] of [
      ['GET', '/device'],
      ['POST', '/device'],
      ['GET', '/device/auth'],
      ['GET', '/device/confirm'],
    ] as const) {
      const res = await fetch(`${t.server.url}${path}`, {
        method,
        redirect: 'manual',
        headers: {
          cookie: '_session=madeUpSessionId00000000; _session.legacy=madeUp',
          'content-type': 'application/x-www-form-urlencoded',
        },
        ...(method === 'POST' ? { body: 'xsrf=x&user_code=ABCD-EFGH' } : {}),
      });
      expect({ path, method, status: res.status < 500 }).toEqual({ path, method, status: true });
    }
  });
});

describe('the edge', () => {
  test('a NUL in the query or the path -> 400 invalid_request', async () => {
    for (const path of [
      '/.well-known/openid-configuration?x=%00',
      '/interaction/a%00b',
      '/jwks?%00=1',
    ]) {
      const reply = await json(await fetch(`${t.server.url}${path}`, { redirect: 'manual' }));
      expect({ path, ...reply }).toEqual({
        path,
        status: 400,
        body: {
          error: 'invalid_request',
          error_description: 'the request contains a NUL character',
        },
      });
    }
  });
});
