import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ACR } from '@portcullis/claims';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createClient,
  createUser,
  decodeJwt,
  publicSpa,
  REDIRECT_URI,
  TEST_API_AUDIENCE,
  tokenRequest,
} from '@portcullis/testing';

// README "Features of oidc-provider": what the discovery document offers is what this
// server has decided to offer. An oidc-provider upgrade that turns something on fails here.

let t: TestAuthServer;
let doc: Record<string, unknown>;
beforeAll(async () => {
  t = await startTestAuthServer();
  doc = (await (await fetch(`${t.issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >;
});
afterAll(async () => {
  await t?.close();
});

describe('the discovery document', () => {
  test('lists exactly the decided fields', () => {
    expect(Object.keys(doc).sort()).toEqual(
      [
        'acr_values_supported',
        'authorization_details_types_supported',
        'authorization_endpoint',
        'authorization_response_iss_parameter_supported',
        'claim_types_supported',
        'claims_parameter_supported',
        'claims_supported',
        // On unless CLIENT_ID_METADATA_DOCUMENTS=off (README "Client ID Metadata Documents").
        'client_id_metadata_document_supported',
        'code_challenge_methods_supported',
        'device_authorization_endpoint',
        'dpop_signing_alg_values_supported',
        'end_session_endpoint',
        'grant_types_supported',
        'id_token_signing_alg_values_supported',
        'introspection_endpoint',
        'introspection_endpoint_auth_methods_supported',
        'introspection_endpoint_auth_signing_alg_values_supported',
        'issuer',
        'jwks_uri',
        'pushed_authorization_request_endpoint',
        'request_uri_parameter_supported',
        'response_modes_supported',
        'response_types_supported',
        'revocation_endpoint',
        'revocation_endpoint_auth_methods_supported',
        'revocation_endpoint_auth_signing_alg_values_supported',
        'scopes_supported',
        'subject_types_supported',
        'token_endpoint',
        'token_endpoint_auth_methods_supported',
        'token_endpoint_auth_signing_alg_values_supported',
        'ui_locales_supported',
        'userinfo_endpoint',
      ].sort(),
    );
  });

  test("RFC 8414's well-known URL serves the same document (MCP clients try it first)", async () => {
    const rfc8414 = await (
      await fetch(`${t.issuer}/.well-known/oauth-authorization-server`)
    ).json();
    expect(rfc8414).toEqual(doc);
  });

  test('offers the two sign-in classes, password and multi-factor', () => {
    expect(doc['acr_values_supported']).toEqual([ACR.password, ACR.mfa]);
  });

  test('names these endpoints and no others', () => {
    const endpoints = Object.fromEntries(
      Object.entries(doc)
        .filter(([k]) => k.endsWith('_endpoint') || k === 'jwks_uri')
        .map(([k, v]) => [k, String(v).slice(t.issuer.length)]),
    );
    expect(endpoints).toEqual({
      authorization_endpoint: '/authorize',
      device_authorization_endpoint: '/device/auth',
      end_session_endpoint: '/session/end',
      introspection_endpoint: '/token/introspection',
      jwks_uri: '/.well-known/jwks.json',
      pushed_authorization_request_endpoint: '/request',
      revocation_endpoint: '/token/revocation',
      token_endpoint: '/token',
      userinfo_endpoint: '/me',
    });
  });

  test('offers code with PKCE S256, the query response mode, and no request objects or claims parameter', () => {
    expect(doc).toMatchObject({
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:grant-type:device_code',
        'urn:ietf:params:oauth:grant-type:token-exchange',
      ],
      subject_types_supported: ['public'],
      claims_parameter_supported: false,
      request_uri_parameter_supported: false,
      authorization_response_iss_parameter_supported: true,
    });
    // Off: dynamic registration (unless REGISTRATION is set), back- and front-channel logout, CIBA, mTLS, JAR, JARM.
    for (const absent of [
      'registration_endpoint',
      'backchannel_logout_supported',
      'frontchannel_logout_supported',
      'backchannel_authentication_endpoint',
      'tls_client_certificate_bound_access_tokens',
      'request_parameter_supported',
      'request_object_signing_alg_values_supported',
      'authorization_signing_alg_values_supported',
    ]) {
      expect(doc[absent]).toBeUndefined();
    }
  });
});

/** An /authorize URL of the demo-like public client, with PKCE. */
async function authorizeUrl(clientId: string, extra: Record<string, string> = {}) {
  const url = new URL(`${t.issuer}/authorize`);
  const params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 's1',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

describe('response modes other than query are refused', () => {
  test.each(['form_post', 'web_message', 'jwt'])(
    'response_mode=%s: unsupported_response_mode in the redirect query, no code, no script',
    async (mode) => {
      const client = await publicSpa(t);
      const res = await browser().get(
        await authorizeUrl(client.client_id, { response_mode: mode }),
      );
      expect(await res.text()).not.toContain('<script');
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location')!);
      expect(location.href.startsWith(`${REDIRECT_URI}?`)).toBe(true);
      expect(location.searchParams.get('error')).toBe('unsupported_response_mode');
      expect(location.searchParams.get('code')).toBeNull();
      expect(location.hash).toBe('');
    },
  );

  test('response_mode=fragment is refused for every client (the error in the fragment, no code)', async () => {
    const client = await publicSpa(t);
    const res = await browser().get(
      await authorizeUrl(client.client_id, { response_mode: 'fragment' }),
    );
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get('error')).toBe('invalid_request');
    expect(fragment.get('error_description')).toContain('response_mode');
    expect(fragment.get('code')).toBeNull();
    expect(location.searchParams.get('code')).toBeNull();
  });
});

describe('RP-initiated logout', () => {
  const POST_LOGOUT = 'http://localhost:5173/signed-out';

  async function signedInWithIdToken() {
    const user = await createUser(t);
    const client = await publicSpa(t, { post_logout_redirect_uris: [POST_LOGOUT] });
    const b = browser();
    const verifier = oidc.randomPKCECodeVerifier();
    const callback = await browserLogin(
      await authorizeUrl(client.client_id, {
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      }),
      user,
      { b },
    );
    const res = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: client.client_id,
        code: callback.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      }),
    });
    const tokens = (await res.json()) as { id_token: string };
    return { b, client, idToken: tokens.id_token };
  }

  test('the logout page is ours: no script, our CSP and frame headers', async () => {
    const { b, client, idToken } = await signedInWithIdToken();
    const url = new URL(`${t.issuer}/session/end`);
    url.searchParams.set('id_token_hint', idToken);
    url.searchParams.set('post_logout_redirect_uri', POST_LOGOUT);
    url.searchParams.set('client_id', client.client_id);
    const res = await b.get(url.href);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' http://localhost:5173");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).not.toContain('<script');
    expect(html).not.toContain('fonts.googleapis.com');
    expect(html).toContain('id="op.logoutForm"');

    // Confirming signs out and lands on the registered post_logout_redirect_uri.
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;
    const confirm = await b.postForm(`${t.issuer}/session/end/confirm`, { xsrf, logout: 'yes' });
    expect(confirm.status).toBe(303);
    expect(confirm.headers.get('location')).toBe(POST_LOGOUT);
  });

  test('an unregistered post_logout_redirect_uri is refused', async () => {
    const { b, client, idToken } = await signedInWithIdToken();
    const url = new URL(`${t.issuer}/session/end`);
    url.searchParams.set('id_token_hint', idToken);
    url.searchParams.set('post_logout_redirect_uri', 'https://evil.example/after');
    url.searchParams.set('client_id', client.client_id);
    const res = await b.get(url.href);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await res.text()).toContain('invalid_request');
  });

  test('without a client the success page is ours too', async () => {
    const b = browser();
    const page = await b.get(`${t.issuer}/session/end`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const confirm = await b.postForm(`${t.issuer}/session/end/confirm`, { xsrf, logout: 'yes' });
    const done = await b.get(new URL(confirm.headers.get('location')!, t.issuer).href);
    expect(done.status).toBe(200);
    expect(done.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await done.text();
    expect(html).toContain('You are signed out.');
    expect(html).not.toContain('fonts.googleapis.com');
  });
});

describe('resource indicators (RFC 8707)', () => {
  test('the API is the one resource: named or not it is the audience; any other is invalid_target', async () => {
    const service = await createClient(t, { grant_types: ['client_credentials'], scope: 'api' });
    const basic = {
      authorization: `Basic ${Buffer.from(`${service.client_id}:${service.client_secret}`).toString('base64')}`,
    };
    const grant = { grant_type: 'client_credentials', scope: 'api' };
    for (const form of [grant, { ...grant, resource: TEST_API_AUDIENCE }]) {
      const res = await tokenRequest(t, form, basic);
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token as string).payload.aud).toBe(TEST_API_AUDIENCE);
    }
    const other = await tokenRequest(t, { ...grant, resource: 'https://other.example/' }, basic);
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ error: 'invalid_target' });
    expect(other.body.access_token).toBeUndefined();
  });
});
