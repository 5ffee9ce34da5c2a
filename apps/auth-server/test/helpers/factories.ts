import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { JsonBody, TestAuthServer } from './server.js';
import { browser, type Browser } from './cookie-jar.js';

export const REDIRECT_URI = 'http://localhost:5173/callback';

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(seq++).toString(36)}`;

export async function createUser(t: TestAuthServer, roles: string[] = ['editor']) {
  const email = `${unique('user')}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await t.admin('POST', '/admin/users', { email, password, roles, name: 'Test User' });
  if (res.status !== 201) throw new Error(`user: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, email, password, roles };
}

export async function createClient(t: TestAuthServer, metadata: Record<string, unknown>) {
  const res = await t.admin('POST', '/admin/clients', { client_id: unique('client'), ...metadata });
  if (res.status !== 201) throw new Error(`client: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { client_id: string; client_secret?: string } & Record<string, unknown>;
}

/** A first-party public SPA with PKCE and refresh tokens, as the demo registers one. */
export const PUBLIC_SPA_METADATA = {
  token_endpoint_auth_method: 'none',
  redirect_uris: [REDIRECT_URI],
  grant_types: ['authorization_code', 'refresh_token'],
  first_party: true,
} as const;

export const publicSpa = (t: TestAuthServer, extra: Record<string, unknown> = {}) =>
  createClient(t, { ...PUBLIC_SPA_METADATA, ...extra });

/** openid-client configuration for a client of the test server (plain http allowed). */
export async function discover(
  t: TestAuthServer,
  clientId: string,
  secret?: string,
  auth?: oidc.ClientAuth,
) {
  return oidc.discovery(
    new URL(t.issuer),
    clientId,
    secret,
    auth ?? (secret ? oidc.ClientSecretBasic(secret) : oidc.None()),
    { execute: [oidc.allowInsecureRequests] },
  );
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/**
 * Drives the browser part of a login: follows redirects, fills the login form and the
 * consent page, stops at the client's redirect_uri. Returns that URL (with code, iss).
 */
export async function browserLogin(
  start: string,
  user: { email: string; password: string },
  options: { b?: Browser; consent?: 'allow' | 'deny'; stopAt?: string; pages?: string[] } = {},
): Promise<URL> {
  const b = options.b ?? browser();
  const stopAt = options.stopAt ?? REDIRECT_URI;
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return new URL(url);
    const res = await b.get(url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    options.pages?.push(html);
    if (res.status !== 200)
      throw new Error(`unexpected ${res.status} at ${url}: ${html.slice(0, 300)}`);
    const base = new URL(url);
    let post: Response;
    if (html.includes('name="password"')) {
      post = await b.postForm(`${base.origin}${base.pathname}/login`, {
        csrf: csrfOf(html),
        email: user.email,
        password: user.password,
      });
    } else if (html.includes('/confirm"')) {
      const action = options.consent === 'deny' ? 'abort' : 'confirm';
      post = await b.postForm(`${base.origin}${base.pathname}/${action}`, { csrf: csrfOf(html) });
    } else {
      return new URL(url);
    }
    if (post.status !== 303)
      throw new Error(`form POST answered ${post.status}: ${(await post.text()).slice(0, 300)}`);
    url = new URL(post.headers.get('location')!, url).href;
  }
  throw new Error('too many redirects');
}

/**
 * A complete Authorization Code + PKCE sign-in with openid-client through the login form
 * (and consent, when the client is not first-party); returns the token response.
 */
export async function pkceSignIn(
  config: oidc.Configuration,
  user: { email: string; password: string },
  options: {
    scope?: string;
    resource?: string;
    b?: Browser;
    redirectUri?: string;
    /** Binds the tokens to this DPoP key (RFC 9449). */
    DPoP?: oidc.DPoPHandle;
  } = {},
) {
  const redirectUri = options.redirectUri ?? REDIRECT_URI;
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: options.scope ?? 'openid profile email offline_access api',
    ...(options.resource ? { resource: options.resource } : {}),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const callback = await browserLogin(url.href, user, {
    stopAt: redirectUri,
    ...(options.b ? { b: options.b } : {}),
  });
  return oidc.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedState: state },
    undefined,
    options.DPoP ? { DPoP: options.DPoP } : undefined,
  );
}

const formField = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

/** Opens /device and submits `typed` as the user code; returns the answer to that POST. */
export async function submitDeviceCode(
  t: Pick<TestAuthServer, 'issuer'>,
  b: Browser,
  typed: string,
) {
  const page = await (await b.get(`${t.issuer}/device`)).text();
  return b.postForm(`${t.issuer}/device`, { xsrf: formField(page, 'xsrf')!, user_code: typed });
}

/**
 * The user's side of the device flow: submits the code, confirms (or aborts) on the
 * confirmation page and signs in. Returns the last page (or the abort's answer).
 */
export async function approveDevice(
  t: Pick<TestAuthServer, 'issuer'>,
  b: Browser,
  typed: string,
  user: { email: string; password: string },
  abort = false,
): Promise<string | Response> {
  const confirm = await submitDeviceCode(t, b, typed);
  const html = await confirm.text();
  if (confirm.status !== 200 || !html.includes('Confirm the device'))
    throw new Error(`no confirmation page: ${confirm.status} ${html.slice(0, 300)}`);
  const form: Record<string, string> = {
    xsrf: formField(html, 'xsrf')!,
    user_code: formField(html, 'user_code')!,
    confirm: 'yes',
  };
  if (abort) form['abort'] = 'yes';
  const res = await b.postForm(`${t.issuer}/device`, form);
  if (abort) return res;
  if (res.status !== 303) throw new Error(`device confirmation answered ${res.status}`);
  const pages: string[] = [];
  await browserLogin(new URL(res.headers.get('location')!, t.issuer).href, user, {
    b,
    stopAt: 'never:',
    pages,
  });
  return pages[pages.length - 1]!;
}

/** pkceSignIn against a test auth server's own client configuration. */
export function signIn(
  _t: TestAuthServer,
  config: oidc.Configuration,
  user: { email: string; password: string },
  scope = 'openid profile email offline_access api',
) {
  return pkceSignIn(config, user, { scope });
}

/** Decodes a JWS without verifying (tests verify separately with jose). */
export function decodeJwt(token: string) {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString()),
  };
}

/** Raw form POST to /token (for refusals openid-client would not send). */
export async function tokenRequest(
  t: TestAuthServer,
  form: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${t.server.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      ...headers,
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as JsonBody, res };
}
