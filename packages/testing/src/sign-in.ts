import * as oidc from 'openid-client';
import type { AuthServerHandle } from './server-handle.js';
import { browser, type Browser } from './cookie-jar.js';
import { discover, REDIRECT_URI } from './factories.js';

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

export interface BrowserLoginOptions {
  b?: Browser;
  consent?: 'allow' | 'deny';
  /** Where to stop: a URL prefix (default REDIRECT_URI) or a test of each URL. */
  stopAt?: string | ((url: URL) => boolean);
  pages?: string[];
}

/** Whether `b`'s session signs it in to `config`'s client again without a form (a code). */
export async function signsInSilently(
  config: oidc.Configuration,
  b: Browser,
  redirectUri: string = REDIRECT_URI,
): Promise<boolean> {
  let url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  }).href;
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(redirectUri)) return new URL(url).searchParams.has('code');
    const res = await b.get(url);
    if (res.status < 300 || res.status >= 400) return false;
    url = new URL(res.headers.get('location')!, url).href;
  }
  return false;
}

/** Follows redirects through login and consent; returns the URL it stopped at. */
export async function browserLogin(
  start: string,
  user: { email: string; password: string },
  options: BrowserLoginOptions = {},
): Promise<URL> {
  const b = options.b ?? browser();
  const stopAt = options.stopAt ?? REDIRECT_URI;
  const stop = typeof stopAt === 'string' ? (url: URL) => url.href.startsWith(stopAt) : stopAt;
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (stop(new URL(url))) return new URL(url);
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

/** Authorization Code + PKCE with openid-client through the login form; returns the tokens. */
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
  t: Pick<AuthServerHandle, 'issuer'>,
  b: Browser,
  typed: string,
) {
  const page = await (await b.get(`${t.issuer}/device`)).text();
  return b.postForm(`${t.issuer}/device`, { xsrf: formField(page, 'xsrf')!, user_code: typed });
}

/** Submits the code, confirms (or aborts) and signs in; returns the last page. */
export async function approveDevice(
  t: Pick<AuthServerHandle, 'issuer'>,
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
    stopAt: () => false,
    pages,
  });
  return pages[pages.length - 1]!;
}

/** A sign-in page reached as a browser reaches it: GET /authorize, then its redirect. */
export interface SignInPage {
  b: Browser;
  res: Response;
  html: string;
  /** The interaction page's URL, and its uid. */
  url: string;
  uid: string;
  /** The page's form token ('' when it has none). */
  csrf: string;
}

/** Opens /authorize (PKCE, scope openid, `params` on top) and the interaction page it leads to. */
export async function openSignInPage(
  server: AuthServerHandle,
  clientId: string,
  options: { b?: Browser; params?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<SignInPage> {
  const b = options.b ?? browser();
  const headers = options.headers ?? {};
  const url = oidc.buildAuthorizationUrl(await discover(server, clientId), {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    ...options.params,
  });
  const first = await b.request(url.href, { headers });
  const interaction = new URL(first.headers.get('location')!, server.issuer);
  const res = await b.request(interaction.href, { headers });
  const html = await res.text();
  return {
    b,
    res,
    html,
    url: interaction.href,
    uid: interaction.pathname.split('/').pop()!,
    csrf: csrfOf(html),
  };
}
