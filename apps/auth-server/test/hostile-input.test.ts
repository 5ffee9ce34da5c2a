/**
 * A NUL character (which PostgreSQL refuses in text) anywhere a client controls is an
 * OAuth error or a 400 page, never server_error: at the app's edge (path and query), in
 * the sign-in form, and at the oidc-provider adapter for bodies oidc-provider parses.
 * Forms are posted with their real xsrf/CSRF token, so the input reaches the handler it
 * targets; and the same browser signs in afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  approveDevice,
  browser,
  browserLogin,
  createClient,
  createUser,
  discover,
  openSignInPage,
  REDIRECT_URI,
  submitDeviceCode,
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

/** What a client_id no client has gets: the lookup ran and found nothing (RFC 6749 §5.2). */
const unknownClient = {
  status: 401,
  body: { error: 'invalid_client', error_description: 'client authentication failed' },
};

describe('a NUL in client_id (unauthenticated)', () => {
  test('POST /token -> 401 invalid_client, as an unknown client', async () => {
    const { status, body } = await tokenRequest(t, {
      grant_type: 'client_credentials',
      client_id: 'a\u0000b',
    });
    expect({ status, body }).toEqual(unknownClient);
  });

  test('POST /device/auth -> 401 invalid_client, as an unknown client', async () => {
    expect(
      await json(await fetch(`${t.server.url}/device/auth`, form({ client_id: 'a\u0000b' }))),
    ).toEqual(unknownClient);
  });

  test('GET /authorize -> 400 invalid_request at the edge (the query)', async () => {
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
    expect(await json(res)).toEqual({
      status: 400,
      body: { error: 'invalid_request', error_description: 'the request contains a NUL character' },
    });
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

  test('a NUL in the user code typed on /device -> looked up as a wrong code; the device then connects', async () => {
    const b = browser();
    // Past the xsrf check: the code is looked up (user codes keep only letters and digits)
    // and matches nothing, which oidc-provider answers as every wrong code, re-rendering
    // the form (200) with the reason.
    const res = await submitDeviceCode(t, b, 'AB\u0000CD');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('That code is not valid. Check it and try again.');

    const user = await createUser(t, ['viewer']);
    const auth = await oidc.initiateDeviceAuthorization(await discover(t, spa.client_id), {
      scope: 'openid',
    });
    expect(await approveDevice(t, b, auth.user_code, user)).toContain('Device connected');
  });
});

describe('the sign-in form', () => {
  test.each([
    ['email', { email: '\u0000', password: 'whatever' }],
    ['password', { email: 'someone@example.com', password: 'pass\u0000word' }],
  ])('a NUL in the %s -> a 400 page; the same sign-in then succeeds', async (_, fields) => {
    const { b, url: interaction, csrf } = await openSignInPage(t, spa.client_id);
    const res = await b.postForm(`${interaction}/login`, { csrf, ...fields });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('<title>Sign-in problem – Portcullis</title>');
    expect(page).not.toMatch(/went wrong/);

    const user = await createUser(t, ['viewer']);
    const callback = await browserLogin(interaction, user, { b });
    expect(callback.searchParams.get('code')).toBeTruthy();
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

  test('device pages with a made-up session cookie -> a fresh code form, else the 400 page', async () => {
    for (const [method, path, status, text] of [
      ['GET', '/device', 200, 'Enter the code shown on your device.'],
      ['POST', '/device', 400, 'This device sign-in has expired or is not valid here.'],
      ['GET', '/device/auth', 400, 'This device sign-in has expired or is not valid here.'],
      ['GET', '/device/confirm', 400, 'This device sign-in has expired or is not valid here.'],
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
      const page = await res.text();
      expect({ path, method, status: res.status, text: page.includes(text) }).toEqual({
        path,
        method,
        status,
        text: true,
      });
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
