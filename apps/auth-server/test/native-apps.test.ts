import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { browser, browserLogin, createClient, createUser, discover } from '@portcullis/testing';

// README "Native apps" (RFC 8252).

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const nativeApp = (redirectUris: string[]) =>
  createClient(t, {
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    redirect_uris: redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    first_party: true,
  });

/** The app's loopback listener on a random port: resolves with the URL it was called at. */
async function loopbackListener(host: '127.0.0.1' | '::1') {
  let received: (url: URL) => void = () => {};
  const callback = new Promise<URL>((resolve) => (received = resolve));
  const server: Server = createServer((req, res) => {
    res.end('You can return to the app.');
    const { port } = server.address() as AddressInfo;
    received(new URL(req.url!, `http://${host === '::1' ? '[::1]' : host}:${port}`));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const literal = host === '::1' ? '[::1]' : host;
  return {
    redirectUri: `http://${literal}:${port}/cb`,
    callback,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function signInThroughLoopback(registered: string, host: '127.0.0.1' | '::1') {
  const user = await createUser(t);
  const client = await nativeApp([registered]);
  const config = await discover(t, client.client_id);
  const listener = await loopbackListener(host);
  try {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: listener.redirectUri,
      scope: 'openid api offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const redirect = await browserLogin(url.href, user, { stopAt: listener.redirectUri });
    // The browser follows the redirect to the app's listener.
    expect((await fetch(redirect)).status).toBe(200);
    const callback = await listener.callback;
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state },
      { redirect_uri: listener.redirectUri },
    );
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.claims()?.sub).toBe(user.id);
  } finally {
    await listener.close();
  }
}

describe('native apps: loopback redirects on any port', () => {
  test('127.0.0.1 registered without a port: a code flow to a listener on a random port', async () => {
    await signInThroughLoopback('http://127.0.0.1/cb', '127.0.0.1');
  });

  test('127.0.0.1 registered with another port: the port is ignored (RFC 8252 §7.3)', async () => {
    await signInThroughLoopback('http://127.0.0.1:1/cb', '127.0.0.1');
  });

  test('[::1] registered without a port', async () => {
    await signInThroughLoopback('http://[::1]/cb', '::1');
  });

  test('the path must still match', async () => {
    const client = await nativeApp(['http://127.0.0.1/cb']);
    const url = new URL(`${t.issuer}/authorize`);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1:5555/other',
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const res = await browser().get(url.href);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('redirect_uri');
  });
});

describe('native apps: private-use URI schemes', () => {
  test('com.example.app:/callback is registered and redirected to', async () => {
    const user = await createUser(t);
    const client = await nativeApp(['com.example.app:/callback']);
    const config = await discover(t, client.client_id);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: 'com.example.app:/callback',
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await browserLogin(url.href, user, { stopAt: 'com.example.app:/callback' });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: oidc.skipStateCheck },
      { redirect_uri: 'com.example.app:/callback' },
    );
    expect(tokens.access_token).toBeTruthy();
  });
});

describe('native apps: refused at registration', () => {
  const register = (metadata: Record<string, unknown>) =>
    t.admin('POST', '/admin/clients', {
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      ...metadata,
    });

  test.each([
    ['http://localhost/cb (RFC 8252 §8.3: an IP literal, not localhost)', 'http://localhost/cb'],
    ['a non-loopback http redirect', 'http://app.example.com/cb'],
    ['a scheme that is not reverse DNS', 'myapp:/callback'],
  ])('a native client with %s', async (_label, uri) => {
    const res = await register({ application_type: 'native', redirect_uris: [uri] });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(JSON.stringify(res.body)).toContain(uri);
  });

  test('a web client with a custom scheme', async () => {
    const res = await register({ redirect_uris: ['com.example.app:/callback'] });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('custom scheme is for native');
  });

  test('a native client with a secret', async () => {
    const res = await register({
      application_type: 'native',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: ['http://127.0.0.1/cb'],
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('cannot keep a secret');
  });
});
