import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createClient,
  createUser,
  discover,
  REDIRECT_URI,
} from '@portcullis/testing';

// README "PAR": pushed authorization requests (RFC 9126).

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const webClient = (server: TestAuthServer, extra: Record<string, unknown> = {}) =>
  createClient(server, {
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code'],
    first_party: true,
    ...extra,
  });

async function pkceParams() {
  const verifier = oidc.randomPKCECodeVerifier();
  return {
    verifier,
    params: {
      redirect_uri: REDIRECT_URI,
      scope: 'openid api',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    },
  };
}

/** POST /request (the PAR endpoint) with client_secret_basic; the raw answer. */
async function push(
  server: TestAuthServer,
  clientId: string,
  secret: string,
  params: Record<string, string>,
) {
  const res = await fetch(`${server.issuer}/request`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ client_id: clientId, response_type: 'code', ...params }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** What /authorize answers a browser: an error on the error page or at the redirect_uri. */
async function authorizeError(url: string): Promise<{ status: number; error: string }> {
  const res = await browser().get(url);
  if (res.status >= 300 && res.status < 400) {
    const location = new URL(res.headers.get('location')!, url);
    return { status: res.status, error: location.searchParams.get('error') ?? '' };
  }
  const html = await res.text();
  return {
    status: res.status,
    error: /(invalid_[a-z_]+|unauthorized_client)/.exec(html)?.[1] ?? html,
  };
}

describe('pushed authorization requests', () => {
  test('discovery names the endpoint and does not require PAR by default', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc.pushed_authorization_request_endpoint).toBe(`${t.issuer}/request`);
    // RFC 9126 §5: absent means false.
    expect(doc.require_pushed_authorization_requests).toBeUndefined();
  });

  test('a code flow through PAR with openid-client (buildAuthorizationUrlWithPAR)', async () => {
    const user = await createUser(t);
    const client = await webClient(t);
    const config = await discover(t, client.client_id, client.client_secret);
    const { verifier, params } = await pkceParams();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, params);
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const callback = await browserLogin(url.href, user);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: params.state,
    });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.claims()?.sub).toBe(user.id);
  });

  test('the push answers expires_in 60', async () => {
    const client = await webClient(t);
    const { params } = await pkceParams();
    const res = await push(t, client.client_id, client.client_secret!, params);
    expect(res.status).toBe(201);
    expect(res.body.expires_in).toBe(60);
  });

  test('a request_uri works once: the second /authorize is refused', async () => {
    const user = await createUser(t);
    const client = await webClient(t);
    const config = await discover(t, client.client_id, client.client_secret);
    const { params } = await pkceParams();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, params);
    const callback = await browserLogin(url.href, user);
    expect(callback.searchParams.get('code')).toBeTruthy();
    expect(await authorizeError(url.href)).toEqual({ status: 400, error: 'invalid_request_uri' });
  });

  test('an expired request_uri is refused', async () => {
    const client = await webClient(t);
    const config = await discover(t, client.client_id, client.client_secret);
    const { params } = await pkceParams();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, params);
    const id = url.searchParams.get('request_uri')!.split(':').pop();
    // As if its 60 seconds had passed.
    const expired = await t.database
      .db('oidc_payloads')
      .where({ type: 'PushedAuthorizationRequest', id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expect(expired).toBe(1);
    expect(await authorizeError(url.href)).toEqual({ status: 400, error: 'invalid_request_uri' });
  });

  test('a client registered with require_pushed_authorization_requests is refused plain /authorize', async () => {
    const client = await webClient(t, { require_pushed_authorization_requests: true });
    expect(client.require_pushed_authorization_requests).toBe(true);
    const config = await discover(t, client.client_id, client.client_secret);
    const { params } = await pkceParams();
    const plain = oidc.buildAuthorizationUrl(config, params);
    expect(await authorizeError(plain.href)).toMatchObject({ error: 'invalid_request' });
    const pushed = await oidc.buildAuthorizationUrlWithPAR(config, params);
    const res = await browser().get(pushed.href);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/interaction\//);
  });

  test('the admin API refuses a non-boolean require_pushed_authorization_requests', async () => {
    const res = await t.admin('POST', '/admin/clients', {
      redirect_uris: [REDIRECT_URI],
      require_pushed_authorization_requests: 'yes',
    });
    expect(res.status).toBe(422);
  });

  describe('bad input at the PAR endpoint answers OAuth errors', () => {
    test('unknown client: 401 invalid_client', async () => {
      const { params } = await pkceParams();
      const res = await push(t, 'no-such-client', 'secret', params);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    });

    test('wrong secret: 401 invalid_client', async () => {
      const client = await webClient(t);
      const { params } = await pkceParams();
      const res = await push(t, client.client_id, 'wrong-secret', params);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    });

    test('missing PKCE: 400 invalid_request', async () => {
      const client = await webClient(t);
      const { params } = await pkceParams();
      const { code_challenge: _c, code_challenge_method: _m, ...withoutPkce } = params;
      const res = await push(t, client.client_id, client.client_secret!, withoutPkce);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });

    test('an unregistered redirect_uri: 400 invalid_request', async () => {
      const client = await webClient(t);
      const { params } = await pkceParams();
      const res = await push(t, client.client_id, client.client_secret!, {
        ...params,
        redirect_uri: 'https://evil.example/cb',
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringContaining('redirect_uri'),
      });
    });

    test('a request_uri sent to the PAR endpoint: 400 request_uri_not_supported', async () => {
      const client = await webClient(t);
      const { params } = await pkceParams();
      const res = await push(t, client.client_id, client.client_secret!, {
        ...params,
        request_uri: 'urn:ietf:params:oauth:request_uri:abc',
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('request_uri_not_supported');
    });
  });
});

describe('REQUIRE_PAR=true', () => {
  let strict: TestAuthServer;
  beforeAll(async () => {
    strict = await startTestAuthServer({ REQUIRE_PAR: 'true' });
  });
  afterAll(async () => {
    await strict?.close();
  });

  test('discovery says so and plain /authorize is refused; a pushed request works', async () => {
    const doc = (await (
      await fetch(`${strict.issuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    expect(doc.require_pushed_authorization_requests).toBe(true);
    const user = await createUser(strict);
    const client = await webClient(strict);
    const config = await discover(strict, client.client_id, client.client_secret);
    const { verifier, params } = await pkceParams();
    const plain = oidc.buildAuthorizationUrl(config, params);
    expect(await authorizeError(plain.href)).toMatchObject({ error: 'invalid_request' });
    const pushed = await oidc.buildAuthorizationUrlWithPAR(config, params);
    const callback = await browserLogin(pushed.href, user);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: params.state,
    });
    expect(tokens.access_token).toBeTruthy();
  });
});
