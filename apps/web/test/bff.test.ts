import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDpopKey, type DpopKey } from '@portcullis/client';
import { browserLogin, TEST_API_AUDIENCE as API_AUDIENCE, tokenRequest } from '@portcullis/testing';
import { createCookieSealer } from '../src/sealed-cookie.js';
import { browser, type Browser } from './helpers/browser-fetch.js';
import { COOKIE_KEY, startStack, type Stack } from './helpers/stack.js';

// The BFF over HTTP against the real authorization server (no API needed here).
let s: Stack;
const GRACE_MS = 400;
beforeAll(async () => {
  s = await startStack({ api: false, refreshGraceMs: GRACE_MS });
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const sealer = () => createCookieSealer([COOKIE_KEY]);
const SPA = { 'X-Requested-With': 'portcullis-web' };
const decode = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const attributes = (raw: string) =>
  raw
    .split(';')
    .slice(1)
    .map((a) => a.trim().toLowerCase());

/** The page's DPoP key in these tests: one per simulated browser. */
const keys = new WeakMap<Browser, DpopKey>();
/** A proof for POST on the token endpoint, as the page makes for each /auth/refresh. */
const proof = async (key: DpopKey) => ({ DPoP: await key.proof('POST', `${s.issuer}/token`) });

const refresh = async (b: Browser, headers: Record<string, string> = SPA) =>
  b.request(`${s.webOrigin}/auth/refresh`, {
    method: 'POST',
    headers: { ...headers, ...(await proof(keys.get(b)!)) },
  });

/** Through the login pages to the SPA, then the page's first refresh: the code exchange. */
async function signedIn(): Promise<{
  b: Browser;
  user: { id: string; email: string; password: string };
  first: Record<string, unknown>;
}> {
  const user = await s.createUser(['editor']);
  const b = browser();
  keys.set(b, await createDpopKey());
  const landed = await browserLogin(`${s.webOrigin}/auth/login`, user, { b, stopAt: () => false });
  expect(landed.href).toBe(`${s.webOrigin}/`);
  const res = await refresh(b);
  expect(res.status).toBe(200);
  return { b, user, first: (await res.json()) as Record<string, unknown> };
}

describe('GET /auth/login', () => {
  test('redirects to /authorize with S256, state, nonce, scope and resource; seals the verifier in a Lax cookie', async () => {
    const b = browser();
    const res = await b.get(`${s.webOrigin}/auth/login`);
    expect(res.status).toBe(303);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const to = new URL(res.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(`${s.issuer}/authorize`);
    const q = Object.fromEntries(to.searchParams);
    expect(q).toMatchObject({
      response_type: 'code',
      client_id: s.webConfig.clientId,
      redirect_uri: `${s.webOrigin}/callback`,
      scope: 'openid profile email offline_access api',
      code_challenge_method: 'S256',
      resource: API_AUDIENCE,
    });
    expect(q['code_challenge']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q['state']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q['nonce']).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const cookie = b.jar.cookie('pkce')!;
    expect(attributes(cookie.raw)).toEqual(
      expect.arrayContaining([
        'path=/callback',
        'max-age=600',
        'httponly',
        'secure',
        'samesite=lax',
      ]),
    );
    // Sealed: the browser holds neither the verifier nor the state in clear.
    expect(cookie.value).not.toContain(q['state']);
    const pending = sealer().open('pkce', cookie.value) as { state: string; verifier: string };
    expect(pending.state).toBe(q['state']);
    expect(pending.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('?prompt=login is passed on (switching users); nothing else is', async () => {
    const res = await fetch(`${s.webOrigin}/auth/login?prompt=login&scope=admin`, {
      redirect: 'manual',
    });
    const q = new URL(res.headers.get('location')!).searchParams;
    expect(q.get('prompt')).toBe('login');
    expect(q.get('scope')).toBe('openid profile email offline_access api');
  });

  test('a step-up sign-in passes acr_values and max_age on; malformed ones are dropped', async () => {
    const authorize = async (query: string) => {
      const res = await fetch(`${s.webOrigin}/auth/login?${query}`, { redirect: 'manual' });
      expect(res.status).toBe(303);
      return new URL(res.headers.get('location')!).searchParams;
    };
    const stepUp = await authorize('acr_values=urn%3Aportcullis%3Aacr%3Amfa&max_age=300');
    expect(stepUp.get('acr_values')).toBe('urn:portcullis:acr:mfa');
    expect(stepUp.get('max_age')).toBe('300');
    for (const junk of ['acr_values=a%22b', 'acr_values=', 'max_age=-1', 'max_age=5m']) {
      const q = await authorize(junk);
      expect([q.get('acr_values'), q.get('max_age')]).toEqual([null, null]);
    }
  });
});

describe('GET /callback', () => {
  test('signs in: the refresh token lands sealed in an HttpOnly, Secure, SameSite=Strict cookie on /auth', async () => {
    const { b } = await signedIn();
    expect(b.jar.get('pkce')).toBeUndefined();
    const rt = b.jar.cookie('rt')!;
    expect(attributes(rt.raw)).toEqual(
      expect.arrayContaining(['path=/auth', 'httponly', 'secure', 'samesite=strict']),
    );
    expect(typeof sealer().open('rt', rt.value)).toBe('string');
    // Neither the access token nor the refresh token appears in the redirect.
    expect(rt.value.startsWith('v1.')).toBe(true);
  });

  test('a state that does not match the sealed one is refused, and no session is made', async () => {
    const user = await s.createUser(['viewer']);
    const b = browser();
    const callback = await browserLogin(`${s.webOrigin}/auth/login`, user, {
      b,
      stopAt: (u) => u.pathname === '/callback',
    });
    callback.searchParams.set('state', 'x'.repeat(43));
    const res = await b.get(callback.href);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/?error=state_mismatch');
    expect(b.jar.get('rt')).toBeUndefined();
    expect(b.jar.get('pkce')).toBeUndefined();
  });

  test('a callback without the sign-in cookie (another browser, or replayed) is refused', async () => {
    const user = await s.createUser(['viewer']);
    const b = browser();
    const callback = await browserLogin(`${s.webOrigin}/auth/login`, user, {
      b,
      stopAt: (u) => u.pathname === '/callback',
    });
    const res = await fetch(callback, { redirect: 'manual' });
    expect(res.headers.get('location')).toBe('/?error=sign_in_expired');
    expect(res.headers.getSetCookie().some((c) => c.startsWith('rt=v1.'))).toBe(false);
  });

  test('a mix-up (iss of another server) is refused', async () => {
    const user = await s.createUser(['viewer']);
    const b = browser();
    const callback = await browserLogin(`${s.webOrigin}/auth/login`, user, {
      b,
      stopAt: (u) => u.pathname === '/callback',
    });
    expect(callback.searchParams.get('iss')).toBe(s.issuer);
    callback.searchParams.set('iss', 'http://evil.test');
    const res = await b.get(callback.href);
    expect(res.headers.get('location')).toBe('/?error=issuer_mismatch');
  });
});

describe("DPoP: the page's key binds both tokens", () => {
  test("the code waits in a sealed cookie for the page's proof; no proof, no exchange", async () => {
    const user = await s.createUser(['editor']);
    const b = browser();
    const key = await createDpopKey();
    keys.set(b, key);
    await browserLogin(`${s.webOrigin}/auth/login`, user, { b, stopAt: () => false });
    expect(b.jar.get('rt')).toBeUndefined();
    const waiting = b.jar.cookie('signin')!;
    expect(attributes(waiting.raw)).toEqual(
      expect.arrayContaining(['path=/auth', 'max-age=60', 'httponly', 'secure', 'samesite=strict']),
    );

    const bare = await b.request(`${s.webOrigin}/auth/refresh`, { method: 'POST', headers: SPA });
    expect(bare.status).toBe(400);
    expect(await bare.json()).toEqual({ error: 'invalid_dpop_proof' });
    expect(b.jar.get('signin')).toBeDefined();

    const res = await refresh(b);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { access_token: string; token_type: string };
    expect(body.token_type).toBe('DPoP');
    expect(decode(body.access_token)).toMatchObject({ cnf: { jkt: key.thumbprint } });
    expect(b.jar.get('signin')).toBeUndefined();
    expect(b.jar.get('rt')).toBeDefined();
    const next = (await (await refresh(b)).json()) as { access_token: string };
    expect(decode(next.access_token)).toMatchObject({ cnf: { jkt: key.thumbprint } });
  });

  test('the refresh cookie with another key is refused: the session ends', async () => {
    const { b } = await signedIn();
    keys.set(b, await createDpopKey());
    const res = await refresh(b);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'session_expired' });
  });
});

describe('POST /auth/refresh', () => {
  test('returns an API access token in the body and rotates the refresh cookie', async () => {
    const { b, user } = await signedIn();
    const before = sealer().open('rt', b.jar.cookie('rt')!.value);
    const res = await refresh(b);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as {
      access_token: string;
      expires_in: number;
      user: Record<string, unknown>;
    };
    expect(body.expires_in).toBe(900);
    expect(body.user).toMatchObject({ sub: user.id, email: user.email, name: 'Test editor' });
    const claims = decode(body.access_token);
    expect(claims).toMatchObject({
      iss: s.issuer,
      aud: API_AUDIENCE,
      sub: user.id,
      roles: ['editor'],
    });
    // `api`, spelled out into the editor's permissions (docs/roles.md "Tokens").
    expect(String(claims['scope']).split(' ')).toEqual(
      expect.arrayContaining(['api', 'orders:read', 'orders:write']),
    );
    const after = sealer().open('rt', b.jar.cookie('rt')!.value);
    expect(typeof after).toBe('string');
    expect(after).not.toBe(before);
    expect(attributes(b.jar.cookie('rt')!.raw)).toEqual(
      expect.arrayContaining(['httponly', 'secure', 'samesite=strict']),
    );
  });

  test.each([
    ['no X-Requested-With header', {}],
    ['a foreign Origin', { ...SPA, Origin: 'http://evil.test' }],
    ['a sibling origin on another port', { ...SPA, Origin: 'http://localhost:1' }],
    ['Sec-Fetch-Site: cross-site', { ...SPA, 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { ...SPA, 'Sec-Fetch-Site': 'same-site' }],
  ])('CSRF: %s is refused before the cookie is used', async (_name, headers) => {
    const { b } = await signedIn();
    const cookie = b.jar.cookie('rt')!.value;
    const res = await refresh(b, headers as Record<string, string>);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'forbidden_origin' });
    expect(b.jar.cookie('rt')!.value).toBe(cookie);
    // The session still works from the SPA itself.
    expect(
      (await refresh(b, { ...SPA, Origin: s.webOrigin, 'Sec-Fetch-Site': 'same-origin' })).status,
    ).toBe(200);
  });

  test('without a cookie, or with a forged one: 401 and the cookie is cleared', async () => {
    const key = await createDpopKey();
    const none = await fetch(`${s.webOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { ...SPA, ...(await proof(key)) },
    });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'not_signed_in' });

    const { b } = await signedIn();
    const real = b.jar.cookie('rt')!.value;
    const forged = `${real.slice(0, -4)}AAAA`;
    const res = await fetch(`${s.webOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { ...SPA, ...(await proof(key)), cookie: `rt=${forged}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.getSetCookie().some((c) => /^rt=;.*Max-Age=0/.test(c))).toBe(true);
    // A cookie sealed for another purpose does not open as rt.
    const swapped = sealer().seal('pkce', sealer().open('rt', real), 60);
    const res2 = await fetch(`${s.webOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { ...SPA, ...(await proof(key)), cookie: `rt=${swapped}` },
    });
    expect(res2.status).toBe(401);
  });

  test('parallel refreshes with one cookie share one rotation and do not trip reuse detection', async () => {
    const { b } = await signedIn();
    const results = await Promise.all(Array.from({ length: 6 }, () => refresh(b)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const tokens = await Promise.all(
      results.map(async (r) => ((await r.json()) as { access_token: string }).access_token),
    );
    expect(new Set(tokens).size).toBe(1);
    const cookies = new Set(
      results.map((r) => r.headers.getSetCookie().find((c) => c.startsWith('rt='))),
    );
    expect(cookies.size).toBeGreaterThanOrEqual(1);
    // The grant is alive: the next refresh with the rotated cookie works.
    const next = await refresh(b);
    expect(next.status).toBe(200);
  });

  test('a request with the previous cookie just after a rotation gets the same result (grace window)', async () => {
    const { b } = await signedIn();
    const old = b.jar.cookie('rt')!.value;
    const first = await refresh(b);
    const late = await fetch(`${s.webOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { ...SPA, ...(await proof(keys.get(b)!)), cookie: `rt=${old}` },
    });
    expect(late.status).toBe(200);
    expect(((await late.json()) as { access_token: string }).access_token).toBe(
      ((await first.json()) as { access_token: string }).access_token,
    );
  });

  test('after the grace window, a replayed old cookie is reuse: the grant is revoked and both sessions end', async () => {
    const { b } = await signedIn();
    const old = b.jar.cookie('rt')!.value;
    expect((await refresh(b)).status).toBe(200);
    // The successor is used too: the auth server tolerates an honest retry of a rotated
    // token only while its successor is unused (REFRESH_REUSE_INTERVAL).
    expect((await refresh(b)).status).toBe(200);
    await new Promise((r) => setTimeout(r, GRACE_MS + 100));
    const replay = await fetch(`${s.webOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { ...SPA, ...(await proof(keys.get(b)!)), cookie: `rt=${old}` },
    });
    expect(replay.status).toBe(401);
    expect(await replay.json()).toEqual({ error: 'session_expired' });
    await s.auth.settle();
    const legit = await refresh(b);
    expect(legit.status).toBe(401);
    expect(b.jar.get('rt')).toBeUndefined();
  });
});

describe('POST /auth/logout', () => {
  test('revokes the refresh token at the authorization server and clears the cookie', async () => {
    const { b } = await signedIn();
    expect((await refresh(b)).status).toBe(200);
    const refreshToken = sealer().open('rt', b.jar.cookie('rt')!.value) as string;

    const refused = await b.request(`${s.webOrigin}/auth/logout`, { method: 'POST' });
    expect(refused.status).toBe(403);

    const res = await b.request(`${s.webOrigin}/auth/logout`, { method: 'POST', headers: SPA });
    expect(res.status).toBe(204);
    expect(b.jar.get('rt')).toBeUndefined();
    const token = await tokenRequest(
      { server: s.auth },
      {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: s.webConfig.clientId,
      },
    );
    expect(token.status).toBe(400);
    expect(token.body['error']).toBe('invalid_grant');
    expect((await refresh(b)).status).toBe(401);
  });
});

describe('the SPA is served with a strict CSP', () => {
  test('no inline script, connect-src limited to self and the API, no framing', async () => {
    const res = await fetch(`${s.webOrigin}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain(`connect-src 'self' ${new URL(s.apiUrl).origin}`);
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/\sstyle=/i);
    for (const file of ['/app.js', '/dpop.js', '/style.css'])
      expect((await fetch(s.webOrigin + file)).status).toBe(200);
    for (const file of ['/../package.json', '/src/app.ts', '/public/app.js']) {
      expect((await fetch(s.webOrigin + file)).status).toBe(404);
    }
  });

  test('/config.json tells the SPA where the API and issuer are', async () => {
    const res = await fetch(`${s.webOrigin}/config.json`);
    expect(await res.json()).toEqual({
      apiUrl: s.apiUrl,
      issuer: s.issuer,
      tokenUrl: `${s.issuer}/token`,
    });
  });
});
