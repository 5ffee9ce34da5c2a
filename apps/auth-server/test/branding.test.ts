/**
 * The pages an operator brands and translates (README "Branding and languages"): the language
 * by ui_locales, then Accept-Language, then UI_DEFAULT_LANGUAGE; BRAND_* on every page and in
 * its CSP; values from clients escaped in every language.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  type Browser,
  browserLogin,
  createClient,
  createUser,
  discover,
  enrolTotp,
  openSignInPage,
  REDIRECT_URI,
} from '@portcullis/testing';

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

/** GET /authorize with `params`, then the interaction page it leads to (a 200). */
async function interactionPage(
  t: TestAuthServer,
  clientId: string,
  options: { params?: Record<string, string>; headers?: Record<string, string>; b?: Browser } = {},
) {
  const page = await openSignInPage(t, clientId, options);
  expect(page.res.status).toBe(200);
  return page;
}

const spaMetadata = {
  token_endpoint_auth_method: 'none',
  redirect_uris: [REDIRECT_URI],
  grant_types: ['authorization_code'],
};

describe('default brand, English by default', () => {
  let t: TestAuthServer;
  let spa: { client_id: string };
  beforeAll(async () => {
    t = await startTestAuthServer();
    spa = await createClient(t, spaMetadata);
  });
  afterAll(async () => {
    await t?.close();
  });

  test('the sign-in page is English without a preference, with "Forgot password?" and no sign-up', async () => {
    const { html, uid, res } = await interactionPage(t, spa.client_id);
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<h1>Sign in</h1>');
    expect(html).toContain('<header><span>Portcullis</span></header>');
    expect(html).toContain(
      `<a href="/password/forgot?interaction=${encodeURIComponent(uid)}">Forgot password?</a>`,
    );
    // SIGNUP is off by default.
    expect(html).not.toContain('/signup');
    expect(res.headers.get('content-security-policy')).toContain("img-src 'self';");
  });

  test.each([
    ['ui_locales=de', { params: { ui_locales: 'fr de' } }],
    ['Accept-Language: de', { headers: { 'accept-language': 'fr;q=0.9, de-CH;q=0.8, en;q=0.5' } }],
  ])('%s -> the sign-in page is German', async (_, options) => {
    const { html, uid } = await interactionPage(t, spa.client_id, options);
    expect(html).toContain('<html lang="de">');
    expect(html).toContain('<h1>Anmelden</h1>');
    expect(html).toContain('<label for="password">Passwort</label>');
    expect(html).toContain(
      `<a href="/password/forgot?interaction=${encodeURIComponent(uid)}">Passwort vergessen?</a>`,
    );
  });

  test('ui_locales wins over Accept-Language; the error after a wrong password stays in it', async () => {
    const { b, html, url } = await interactionPage(t, spa.client_id, {
      params: { ui_locales: 'de' },
      headers: { 'accept-language': 'en' },
    });
    expect(html).toContain('<html lang="de">');
    const res = await b.postForm(`${url}/login`, {
      csrf: csrfOf(html),
      email: 'nobody@example.com',
      password: 'wrong',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('E-Mail-Adresse oder Passwort ist falsch.');
  });

  test('the second-factor step follows the sign-in: ui_locales=de -> German, its errors too', async () => {
    const user = await createUser(t, ['viewer']);
    await enrolTotp(t, browser(), user);
    const { b, html, url } = await interactionPage(t, spa.client_id, {
      params: { ui_locales: 'de' },
    });
    const login = await b.postForm(`${url}/login`, {
      csrf: csrfOf(html),
      email: user.email,
      password: user.password,
    });
    expect(login.status).toBe(303);
    const factor = await (
      await b.get(new URL(login.headers.get('location')!, t.issuer).href)
    ).text();
    expect(factor).toContain('<html lang="de">');
    expect(factor).toContain('<h1>Bestätigen Sie, dass Sie es sind</h1>');
    expect(factor).toContain('Code aus Ihrer Authenticator-App');
    // Five digits: never a valid code.
    const wrong = await b.postForm(`${url}/totp`, { csrf: csrfOf(factor), code: '12345' });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('Dieser Code ist nicht gültig. Versuchen Sie es erneut.');
  });

  test("sign-out follows end_session's ui_locales", async () => {
    const user = await createUser(t, ['viewer']);
    const b = browser();
    const config = await discover(t, spa.client_id);
    const start = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    await browserLogin(start.href, user, { b });
    const res = await b.get(`${t.issuer}/session/end?ui_locales=de`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<html lang="de">');
    expect(html).toContain('Möchten Sie sich abmelden?');
  });

  test('discovery lists the shipped languages as ui_locales_supported', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const body = (await res.json()) as { ui_locales_supported?: string[] };
    expect(body.ui_locales_supported).toEqual(['en', 'de']);
  });

  test.each([
    ['en', 'asks for:', 'Your email address'],
    ['de', 'bittet um:', 'Ihre E-Mail-Adresse'],
  ])(
    'consent (%s): a client name with HTML is escaped; scopes in words with their names',
    async (language, asks, email) => {
      const hostile = await createClient(t, {
        ...spaMetadata,
        client_name: '<script>alert(1)</script><b>x</b>',
      });
      const user = await createUser(t, ['viewer']);
      const { b, html, url } = await interactionPage(t, hostile.client_id, {
        params: { ui_locales: language, scope: 'openid email' },
      });
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;');
      const login = await b.postForm(`${url}/login`, {
        csrf: csrfOf(html),
        email: user.email,
        password: user.password,
      });
      expect(login.status).toBe(303);
      // The sign-in returns to /authorize, which sends the browser to the consent step.
      let page = login;
      while (page.status >= 300 && page.status < 400) {
        page = await b.get(new URL(page.headers.get('location')!, t.issuer).href);
      }
      expect(page.status).toBe(200);
      const text = await page.text();
      expect(text).toContain(`<html lang="${language}">`);
      expect(text).toContain(
        `<strong>&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;</strong> ${asks}`,
      );
      expect(text).not.toContain('<script>alert');
      expect(text).not.toContain('<b>x</b>');
      expect(text).toContain(`<li>${email} <code class="muted">email</code></li>`);
    },
  );
});

describe('an operator brand and German by default', () => {
  let t: TestAuthServer;
  let spa: { client_id: string };
  beforeAll(async () => {
    t = await startTestAuthServer({
      UI_DEFAULT_LANGUAGE: 'de',
      BRAND_NAME: 'Acme & Co',
      BRAND_LOGO_URL: 'https://cdn.example.com/brand/logo.svg?v=2',
      BRAND_COLOR: '#aa0011',
      BRAND_BACKGROUND: '#fafafa',
      SIGNUP: 'open',
    });
    spa = await createClient(t, spaMetadata);
  });
  afterAll(async () => {
    await t?.close();
  });

  test('UI_DEFAULT_LANGUAGE=de: German without a preference; ui_locales=en still English', async () => {
    const german = await interactionPage(t, spa.client_id);
    expect(german.html).toContain('<html lang="de">');
    expect(german.html).toContain('<h1>Anmelden</h1>');
    const english = await interactionPage(t, spa.client_id, { params: { ui_locales: 'en' } });
    expect(english.html).toContain('<html lang="en">');
    expect(english.html).toContain('<h1>Sign in</h1>');
  });

  test('the brand: name, logo and colours on the page; the CSP allows exactly the logo origin', async () => {
    const { html, res, uid } = await interactionPage(t, spa.client_id);
    expect(html).toContain(
      '<header><img src="https://cdn.example.com/brand/logo.svg?v=2" alt=""><span>Acme &amp; Co</span></header>',
    );
    expect(html).toContain('<title>Anmelden – Acme &amp; Co</title>');
    expect(html).toContain('background:#fafafa');
    expect(html).toContain('background:#aa0011');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("img-src 'self' https://cdn.example.com;");
    expect(csp).toContain("default-src 'none';");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    // SIGNUP=open: the sign-in page offers an account.
    expect(html).toContain(
      `<a href="/signup?interaction=${encodeURIComponent(uid)}">Konto erstellen</a>`,
    );
  });

  test('pages outside a sign-in follow Accept-Language, then the default', async () => {
    const german = await fetch(`${t.issuer}/account`);
    expect(german.status).toBe(401);
    expect(await german.text()).toContain('<h1>Ihr Konto</h1>');
    expect(german.headers.get('content-security-policy')).toContain(
      "img-src 'self' https://cdn.example.com;",
    );
    const english = await fetch(`${t.issuer}/account`, { headers: { 'accept-language': 'en' } });
    expect(await english.text()).toContain('Sign in to manage how you sign in.');
    const device = await fetch(`${t.issuer}/device`);
    expect(await device.text()).toContain('Gerät verbinden');
  });
});
