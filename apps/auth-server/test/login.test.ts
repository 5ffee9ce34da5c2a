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

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

async function openLogin(clientId: string) {
  const b = browser();
  const config = await discover(t, clientId);
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid email api',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
  const first = await b.get(url.href);
  const interaction = new URL(first.headers.get('location')!, t.issuer).href;
  const page = await b.get(interaction);
  const html = await page.text();
  return { b, interaction, page, html, csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]! };
}

describe('login and consent pages', () => {
  test('login page: inputs email and password, strict CSP, no framing', async () => {
    const spa = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      client_name: '<b>Evil</b>',
    });
    const { page, html } = await openLogin(spa.client_id);
    expect(html).toContain('name="email"');
    expect(html).toContain('name="password"');
    expect(html).toContain('&lt;b&gt;Evil&lt;/b&gt;');
    expect(html).not.toContain('<b>Evil</b>');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' http://localhost:5173");
  });

  test('a POST without the CSRF token is refused', async () => {
    const spa = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
    });
    const user = await createUser(t);
    const { b, interaction } = await openLogin(spa.client_id);
    const res = await b.postForm(`${interaction}/login`, {
      email: user.email,
      password: user.password,
    });
    expect(res.status).toBe(403);
  });

  test('unknown email and wrong password get the same answer', async () => {
    const spa = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
    });
    const user = await createUser(t);
    const a = await openLogin(spa.client_id);
    const unknown = await a.b.postForm(`${a.interaction}/login`, {
      csrf: a.csrf,
      email: 'nobody@example.com',
      password: 'whatever-pw',
    });
    const b = await openLogin(spa.client_id);
    const wrong = await b.b.postForm(`${b.interaction}/login`, {
      csrf: b.csrf,
      email: user.email,
      password: 'wrong-password',
    });
    expect(unknown.status).toBe(400);
    expect(wrong.status).toBe(400);
    const msg = (html: string) => /class="error"[^>]*>([^<]*)</.exec(html)?.[1];
    expect(msg(await unknown.text())).toBe(msg(await wrong.text()));
  });

  test('failed logins per account are limited: 429 with Retry-After, even with the right password', async () => {
    const spa = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
    });
    const user = await createUser(t);
    const s = await openLogin(spa.client_id);
    for (let i = 0; i < 5; i++) {
      const res = await s.b.postForm(`${s.interaction}/login`, {
        csrf: s.csrf,
        email: user.email,
        password: `wrong-${i}-pw`,
      });
      expect(res.status).toBe(400);
    }
    const limited = await s.b.postForm(`${s.interaction}/login`, {
      csrf: s.csrf,
      email: user.email,
      password: user.password,
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('a third-party client shows consent once; the grant is remembered', async () => {
    const spa = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
    });
    const user = await createUser(t);
    const config = await discover(t, spa.client_id);
    const b = browser();
    const start = async () =>
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid api',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      }).href;
    const pages: string[] = [];
    const first = await browserLogin(await start(), user, { b, pages });
    expect(first.searchParams.get('code')).toBeTruthy();
    expect(pages.some((p) => p.includes('Authorize access'))).toBe(true);
    const again: string[] = [];
    const second = await browserLogin(await start(), user, { b, pages: again });
    expect(second.searchParams.get('code')).toBeTruthy();
    expect(again).toHaveLength(0);
  });

  test('denying consent returns access_denied to the client', async () => {
    const spa = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
    });
    const user = await createUser(t);
    const config = await discover(t, spa.client_id);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid api',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const back = await browserLogin(url.href, user, { consent: 'deny' });
    expect(back.searchParams.get('error')).toBe('access_denied');
  });
});
