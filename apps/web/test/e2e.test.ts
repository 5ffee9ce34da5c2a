import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import {
  browser as cookieJarBrowser,
  enrolTotp,
  tokenRequest,
  totpCode,
} from '@portcullis/testing';
import { launchBrowser, readmeScreenshot } from '@portcullis/testing/browser';
import { createCookieSealer } from '../src/sealed-cookie.js';
import { COOKIE_KEY, startStack, type Stack } from './helpers/stack.js';

// The demo end to end in Chromium (README "Browser demo" says which): the real authorization
// server's login and consent pages, the BFF, the SPA, and the real API (CORS, bearer calls, SSE).
const ARTIFACTS = new URL('../test-artifacts/', import.meta.url);
const DEMO_PNG = new URL('../docs/demo.png', import.meta.url);

let s: Stack;
let browser: Browser;
beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  s = await startStack();
  browser = await launchBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

/** Console errors and page errors, minus the 401 a signed-out page gets from /auth/refresh by design. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const url = m.location().url;
    if (/status of 401/.test(m.text()) && url.endsWith('/auth/refresh')) return;
    // The authorization server's pages declare no icon; the browser asks anyway.
    if (url === `${s.issuer}/favicon.ico`) return;
    problems.push(`console: ${m.text()} (${url})`);
  });
  return problems;
}

const isRefresh = (r: Response) =>
  new URL(r.url()).pathname === '/auth/refresh' && r.request().method() === 'POST';
const shot = (page: Page, name: string) =>
  page.screenshot({ path: new URL(name, ARTIFACTS).pathname });

async function signInWithPages(
  page: Page,
  user: { email: string; password: string },
  screenshots = false,
) {
  await page.click('#sign-in');
  await page.waitForURL((u) => u.href.startsWith(`${s.issuer}/interaction/`));
  await page.fill('input[name="email"]', user.email);
  await page.fill('input[name="password"]', user.password);
  if (screenshots) await shot(page, '02-login.png');
  await page.click('form:has(input[name="password"]) button[type="submit"]');
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  if (screenshots) await shot(page, '03-consent.png');
  const refreshed = page.waitForResponse((r) => isRefresh(r) && r.status() === 200);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${s.webOrigin}/`);
  return (await (await refreshed).json()) as { access_token: string; expires_in: number };
}

async function storageSnapshot(page: Page) {
  // A string, evaluated in the page: this file is compiled without the DOM library.
  return page.evaluate<{ cookie: string; local: [string, string][]; session: [string, string][] }>(
    '({ cookie: document.cookie, local: Object.entries(localStorage), session: Object.entries(sessionStorage) })',
  );
}

/** The page's DPoP key from IndexedDB, as the page stores it; `proofs` signed with it for GET `url`. */
async function pageKey(page: Page, url: string, accessToken: string, proofs: number) {
  // A string, evaluated in the page (which imports its own dpop.js): see storageSnapshot.
  return page.evaluate<{
    extractable: boolean;
    thumbprint: string;
    proofs: string[];
  }>(`(async () => {
    const { createDpopKey } = await import('/dpop.js');
    const keyPair = await new Promise((resolve, reject) => {
      const open = indexedDB.open('portcullis-demo', 1);
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const get = open.result.transaction('keys').objectStore('keys').get('dpop');
        get.onsuccess = () => resolve(get.result);
        get.onerror = () => reject(get.error);
      };
    });
    const key = await createDpopKey({ keyPair });
    const proofs = [];
    for (let i = 0; i < ${proofs}; i++)
      proofs.push(await key.proof('GET', ${JSON.stringify(url)}, { accessToken: ${JSON.stringify(accessToken)} }));
    return { extractable: keyPair.privateKey.extractable, thumbprint: key.thumbprint, proofs };
  })()`);
}

const jktOf = (accessToken: string) =>
  (
    JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as {
      cnf?: { jkt?: string };
    }
  ).cnf?.jkt;

describe('browser demo', () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let firstToken: string;

  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1100, height: 820 } });
    page = await context.newPage();
    problems = watchProblems(page);
  });
  afterAll(async () => {
    await context?.close();
  });

  test('signs in through the authorization server pages and lands on the SPA, signed in', async () => {
    const user = await s.createUser(['editor'], {
      email: 'eddie.editor@example.com',
      name: 'Eddie Editor',
    });
    await page.goto(`${s.webOrigin}/`);
    await page.locator('#signed-out').waitFor();
    await shot(page, '01-signed-out.png');

    const tokens = await signInWithPages(page, user, true);
    firstToken = tokens.access_token;
    expect(tokens.expires_in).toBe(900);
    await page.locator('#who', { hasText: user.email }).waitFor();
    await page.locator('#profile-name', { hasText: 'Eddie Editor' }).waitFor();
    await page.locator('#profile-roles', { hasText: 'editor' }).waitFor();
    await shot(page, '04-signed-in.png');
  }, 60_000);

  test('the refresh token is an HttpOnly, Secure, SameSite=Strict cookie; no token is readable by scripts or stored', async () => {
    const cookies = await context.cookies(s.webOrigin + '/auth/refresh');
    const rt = cookies.find((c) => c.name === 'rt')!;
    expect(rt).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/auth' });
    // The cookie is sealed: the refresh token itself is not in the browser.
    const refreshToken = createCookieSealer([COOKIE_KEY]).open('rt', rt.value) as string;
    expect(typeof refreshToken).toBe('string');

    const storage = await storageSnapshot(page);
    expect(storage.cookie).not.toContain('rt=');
    expect(storage.local).toEqual([]);
    expect(storage.session).toEqual([]);
    const everything = JSON.stringify({ storage, cookies: await context.cookies() });
    expect(everything).not.toContain(firstToken);
    expect(everything).not.toContain(refreshToken);
    // What IndexedDB holds is the DPoP key the tokens are bound to, which scripts cannot export.
    const key = await pageKey(page, `${s.apiUrl}/orders`, firstToken, 0);
    expect(key.extractable).toBe(false);
    expect(jktOf(firstToken)).toBe(key.thumbprint);
  });

  test('a reload stays signed in: the SPA gets a new access token by refreshing', async () => {
    const refreshed = page.waitForResponse((r) => isRefresh(r) && r.status() === 200);
    await page.reload();
    const { access_token } = (await (await refreshed).json()) as { access_token: string };
    expect(access_token).not.toBe(firstToken);
    // The key survived the reload: the new token is bound to the same one.
    expect(jktOf(access_token)).toBe(jktOf(firstToken));
    await page.locator('#who', { hasText: 'eddie.editor@example.com' }).waitFor();
    await page.locator('#signed-out').waitFor({ state: 'hidden' });
  }, 30_000);

  test('creates an order (POST /orders, DPoP, CORS) and sees it arrive on the live stream', async () => {
    await page.locator('#stream-status', { hasText: 'live' }).waitFor();
    await page.fill('input[name="customer"]', 'Playwright Ltd');
    await page.fill('input[name="amount"]', '4200');
    await page.fill('input[name="currency"]', 'EUR');
    await page.click('#order-form button[type="submit"]');
    await page.locator('#order-rows tr', { hasText: 'Playwright Ltd' }).waitFor();
    await page.locator('#stream-events li', { hasText: 'order.created' }).first().waitFor();
    await expect(
      page.locator('#stream-events li', { hasText: 'Playwright Ltd' }).count(),
    ).resolves.toBeGreaterThan(0);
  }, 30_000);

  test('pays the order with an Idempotency-Key and sees payment.succeeded live', async () => {
    const payment = page.waitForRequest(
      (r) => r.url().endsWith('/payments') && r.method() === 'POST',
    );
    await page
      .locator('#order-rows tr', { hasText: 'Playwright Ltd' })
      .getByRole('button', { name: 'Pay' })
      .click();
    const sent = await payment;
    expect(sent.headers()['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    await page.locator('#notice', { hasText: 'Payment succeeded' }).waitFor();
    await page.locator('#stream-events li', { hasText: 'payment.succeeded' }).waitFor();
    await page.locator('#order-rows tr', { hasText: 'Playwright Ltd' }).getByText('paid').waitFor();
    await shot(page, '05-order-paid.png');
    // The README's picture: written when missing (or on request), not on every run.
    await readmeScreenshot(page, DEMO_PNG, { clip: { x: 0, y: 0, width: 1100, height: 600 } });
  }, 30_000);

  test('signs out: the refresh token is revoked, the cookie cleared, and a reload shows signed out', async () => {
    const rt = (await context.cookies(s.webOrigin + '/auth/refresh')).find((c) => c.name === 'rt')!;
    const refreshToken = createCookieSealer([COOKIE_KEY]).open('rt', rt.value) as string;
    await page.click('#sign-out');
    await page.locator('#signed-out').waitFor();
    expect(
      (await context.cookies(s.webOrigin + '/auth/refresh')).some((c) => c.name === 'rt'),
    ).toBe(false);
    await page.reload();
    await page.locator('#signed-out').waitFor();
    await page.locator('#signed-in').waitFor({ state: 'hidden' });
    await shot(page, '06-signed-out-again.png');
    const reuse = await tokenRequest(
      { server: s.auth },
      {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: s.webConfig.clientId,
      },
    );
    expect(reuse.status).toBe(400);
  }, 30_000);

  test('no CSP violation or script error happened along the way', () => {
    expect(problems).toEqual([]);
  });
});

describe('sign out everywhere', () => {
  test('POST /logout/all with the DPoP-bound token: tokens issued so far are refused by the API, and this browser is signed out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watchProblems(page);
    try {
      const user = await s.createUser(['viewer']);
      await page.goto(`${s.webOrigin}/`);
      const { access_token } = await signInWithPages(page, user);
      await page.locator('#who', { hasText: user.email }).waitFor();
      // A copy of the token is useless without the page's key, as Bearer or as DPoP.
      const stolen = await fetch(`${s.apiUrl}/orders`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(stolen.status).toBe(401);
      // Proofs the page's key signs now (the key goes with the sign-out), used one each.
      const { proofs } = await pageKey(page, `${s.apiUrl}/orders`, access_token, 2);
      const withProof = (proof: string) =>
        fetch(`${s.apiUrl}/orders`, {
          headers: { authorization: `DPoP ${access_token}`, dpop: proof },
        });
      expect((await withProof(proofs[0]!)).status).toBe(200);

      const logoutAll = page.waitForResponse((r) => r.url().endsWith('/logout/all'));
      await page.click('#sign-out-everywhere');
      expect((await logoutAll).status()).toBe(204);
      await page.locator('#signed-out').waitFor();
      await page.locator('#notice', { hasText: 'every device' }).waitFor();

      expect((await withProof(proofs[1]!)).status).toBe(401);
      await page.reload();
      await page.locator('#signed-out').waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  test('a viewer sees the no-access state instead of an error when creating an order', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      const user = await s.createUser(['viewer']);
      await page.goto(`${s.webOrigin}/`);
      await page.click('#sign-in');
      // The authorization server may still hold a session from the previous test in another
      // context: contexts do not share cookies, so this is a full sign-in.
      await page.fill('input[name="email"]', user.email);
      await page.fill('input[name="password"]', user.password);
      await page.click('form:has(input[name="password"]) button[type="submit"]');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.locator('#who', { hasText: user.email }).waitFor();
      await page.click('#order-form button[type="submit"]');
      await page.locator('#notice', { hasText: 'Not allowed' }).waitFor();
    } finally {
      await context.close();
    }
  }, 60_000);
});

describe('step-up', () => {
  // What the auth server asks at a step-up sign-in is its own (README "Step-up"); these
  // tests follow the page: it leaves with the challenge, and when it is opened again after
  // that sign-in it makes the same payment once more, or drops it if the sign-in failed.
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  const payments: Response[] = [];

  beforeAll(async () => {
    context = await browser.newContext();
    page = await context.newPage();
    problems = watchProblems(page);
    page.on('response', (r) => {
      if (r.url() === `${s.apiUrl}/payments` && r.request().method() === 'POST') payments.push(r);
    });
    await page.goto(`${s.webOrigin}/`);
    const user = await s.createUser(['editor']);
    await signInWithPages(page, user);
    await page.fill('input[name="customer"]', 'Big Spender');
    await page.fill('input[name="amount"]', '60000'); // above STEP_UP_PAYMENT_AMOUNT (50000)
    await page.click('#order-form button[type="submit"]');
  }, 60_000);
  afterAll(async () => {
    await context?.close();
  });

  /**
   * Clicks Pay on the big order and waits until the step-up sign-in's page has loaded (a
   * navigation started before that would be interrupted by /authorize's redirect); resolves to
   * the /authorize request's parameters.
   */
  async function payAndLeave() {
    const authorize = page.waitForRequest((r) => r.url().startsWith(`${s.issuer}/authorize`));
    await page
      .locator('#order-rows tr', { hasText: 'Big Spender' })
      .getByRole('button', { name: 'Pay' })
      .click();
    const asked = new URL((await authorize).url()).searchParams;
    await page.waitForURL((url) => url.href.startsWith(`${s.issuer}/interaction/`));
    return asked;
  }

  test('a payment above STEP_UP_PAYMENT_AMOUNT leaves for a sign-in asking for acr_values and max_age; back on the page, the same payment is made once more', async () => {
    const asked = await payAndLeave();
    expect(asked.get('acr_values')).toBe('urn:portcullis:acr:mfa');
    expect(asked.get('max_age')).toBe('300');
    expect(payments.map((r) => r.status())).toEqual([401]);

    await page.goto(`${s.webOrigin}/`);
    // This sign-in (a password only, no urn:portcullis:acr:mfa) still falls short: the API
    // refuses the payment again and the page says so instead of leaving again.
    await page.locator('#notice', { hasText: 'needs a stronger sign-in' }).waitFor();
    expect(payments.map((r) => r.status())).toEqual([401, 401]);
    const [first, retried] = payments.map((r) => r.request().headers()['idempotency-key']);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(retried).toBe(first);
    expect(page.url()).toBe(`${s.webOrigin}/`);
    expect((await storageSnapshot(page)).session).toEqual([]);
  }, 30_000);

  test('a step-up sign-in that was cancelled leaves the payment undone', async () => {
    payments.length = 0;
    await payAndLeave();
    // Where the BFF sends a cancelled sign-in back to (GET /callback?error=access_denied).
    await page.goto(`${s.webOrigin}/?error=access_denied`);
    await page.locator('#notice', { hasText: 'Sign-in was cancelled' }).waitFor();
    await page.locator('#order-rows tr', { hasText: 'Big Spender' }).waitFor();
    await page.waitForTimeout(500);
    expect(payments.map((r) => r.status())).toEqual([401]);
    expect((await storageSnapshot(page)).session).toEqual([]);
  }, 30_000);

  test('no script error happened along the way', () => {
    // The refused payments are the API's answer (401), logged by the browser as such.
    expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
  });
});

describe('step-up with an authenticator app', () => {
  test('a payment above STEP_UP_PAYMENT_AMOUNT: the step-up sign-in asks for the code, and back on the page the payment is made', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watchProblems(page);
    const payments: Response[] = [];
    page.on('response', (r) => {
      if (r.url() === `${s.apiUrl}/payments` && r.request().method() === 'POST') payments.push(r);
    });
    try {
      const user = await s.createUser(['editor']);
      await page.goto(`${s.webOrigin}/`);
      await signInWithPages(page, user);
      await page.locator('#who', { hasText: user.email }).waitFor();
      // Since this password-only sign-in, the user has turned on an authenticator app.
      const { secret } = await enrolTotp({ issuer: s.issuer }, cookieJarBrowser(), user);
      await page.fill('input[name="customer"]', 'Stepped Up Ltd');
      await page.fill('input[name="amount"]', '75000'); // above STEP_UP_PAYMENT_AMOUNT (50000)
      await page.click('#order-form button[type="submit"]');
      const row = page.locator('#order-rows tr', { hasText: 'Stepped Up Ltd' });
      await row.getByRole('button', { name: 'Pay' }).click();

      // The auth server's session stands for the password (max_age 300): only the code is asked.
      const code = page.getByLabel('Code from your authenticator app');
      await code.waitFor();
      expect(page.url()).toMatch(new RegExp(`^${s.issuer}/interaction/`));
      expect(payments.map((r) => r.status())).toEqual([401]);
      // The enrolment used this period's code: the next period's is accepted once.
      await code.fill(totpCode(secret, Date.now() + 30_000));
      const refreshed = page.waitForResponse((r) => isRefresh(r) && r.status() === 200);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL((u) => u.href.startsWith(`${s.webOrigin}/`));
      const { access_token } = (await (await refreshed).json()) as { access_token: string };
      const claims = JSON.parse(
        Buffer.from(access_token.split('.')[1]!, 'base64url').toString(),
      ) as { acr?: string; amr?: string[] };
      expect(claims).toMatchObject({ acr: 'urn:portcullis:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });

      await page.locator('#notice', { hasText: 'Payment succeeded' }).waitFor();
      await row.getByText('paid').waitFor();
      expect(payments.map((r) => r.status())).toEqual([401, 201]);
      const [refused, made] = payments.map((r) => r.request().headers()['idempotency-key']);
      expect(refused).toMatch(/^[0-9a-f-]{36}$/);
      expect(made).toBe(refused);
      expect((await storageSnapshot(page)).session).toEqual([]);
      expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
