import { expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import { createUser, discover, publicSpa, totpCode } from '@portcullis/testing';
import {
  type Browser,
  browserSignInForFile,
  collectRefusals,
  README_IMG,
  readmeScreenshot,
  submitPassword,
} from '@portcullis/testing/browser';

// The authenticator app in real Chromium (README "Multi-factor sign-in"): the pages'
// CSP, the QR image and every redirect as a browser applies them (the cookie-jar tests of
// mfa.test.ts do not check those). Codes are computed here from the key the page shows.

let t: TestAuthServer;
let browser: Browser;
let redirectUri: string;
browserSignInForFile((stack) => ({ auth: t, browser, redirectUri } = stack));

/** Collects into `refusals` the page's console messages of content the CSP refused. */
test('enrol an authenticator app on the account page, then sign in with a code', async () => {
  const user = await createUser(t);
  const client = await publicSpa(t, { redirect_uris: [redirectUri], client_name: 'Example app' });
  const context = await browser.newContext({ viewport: { width: 520, height: 760 } });
  const page = await context.newPage();
  const refusals: string[] = [];
  collectRefusals(page, refusals);
  try {
    await page.goto(`${t.issuer}/account/sign-in`);
    await submitPassword(page, user);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();

    const qr = page.getByRole('img', { name: 'QR code of the authenticator key' });
    await qr.waitFor();
    expect(
      await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
    ).toBeGreaterThan(0);
    const secret = (await page.locator('#totp-secret').innerText()).replaceAll(' ', '');
    await readmeScreenshot(page, new URL('totp-enrol.png', README_IMG));
    await page.fill('input[name="code"]', totpCode(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    expect(await page.locator('.recovery-code').count()).toBe(10);

    const config = await discover(t, client.client_id);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    // Another browser: the password, then the code.
    const other = await browser.newContext({ viewport: { width: 520, height: 560 } });
    const signIn = await other.newPage();
    collectRefusals(signIn, refusals);
    try {
      await signIn.goto(url.href);
      await submitPassword(signIn, user);
      await signIn.getByLabel('Code from your authenticator app').waitFor();
      await readmeScreenshot(signIn, new URL('totp-sign-in.png', README_IMG));
      // The enrolment used this period's code: the next period's is accepted once.
      await signIn.fill('input[name="code"]', totpCode(secret, Date.now() + 30_000));
      await signIn.getByRole('button', { name: 'Verify' }).click();
      await signIn.waitForURL((u) => u.href.startsWith(redirectUri));
      expect(new URL(signIn.url()).searchParams.get('code')).toBeTruthy();
      expect(await signIn.textContent('body')).toBe('signed in');
    } finally {
      await other.close();
    }
    expect(refusals).toEqual([]);
  } finally {
    await context.close();
  }
}, 60_000);
