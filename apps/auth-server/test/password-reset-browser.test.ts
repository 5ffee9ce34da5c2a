import { expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import { createUser, discover, publicSpa, type Mailbox } from '@portcullis/testing';
import {
  type Browser,
  browserSignInWithMailForFile,
  collectRefusals,
  submitPassword,
} from '@portcullis/testing/browser';

// A forgotten password in real Chromium (README "Forgotten password"): from the sign-in, the
// request, the mail at a real SMTP server, the new password, and back to the same sign-in.

let mailbox: Mailbox;
let t: TestAuthServer;
let browser: Browser;
let redirectUri: string;
browserSignInWithMailForFile((stack) => ({ auth: t, browser, redirectUri, mailbox } = stack));

test('forgot → mail → new password → back to the sign-in, which takes it', async () => {
  const user = await createUser(t);
  const client = await publicSpa(t, { redirect_uris: [redirectUri], client_name: 'Example app' });
  const config = await discover(t, client.client_id);
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
  const context = await browser.newContext({ viewport: { width: 520, height: 700 } });
  const page = await context.newPage();
  const refusals: string[] = [];
  collectRefusals(page, refusals);
  try {
    await page.goto(url.href);
    await page.locator('input[name="password"]').waitFor();
    const uid = /\/interaction\/([^/?]+)/.exec(new URL(page.url()).pathname)?.[1];
    expect(uid).toBeTruthy();
    // The sign-in page links here with its interaction (the i18n pages add the link).
    await page.goto(`${t.issuer}/password/forgot?interaction=${uid}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByRole('button', { name: 'Send link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();

    const mail = await mailbox.next(user.email);
    const link = mail.links.find((l) => l.includes('/password/reset?token='))!;
    await page.goto(link);
    await page.getByLabel('New password').fill('my brand new password');
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.getByRole('heading', { name: 'Password changed' }).waitFor();
    await page.getByRole('link', { name: 'Continue signing in' }).click();

    await submitPassword(page, { email: user.email, password: 'my brand new password' });
    await page.waitForURL((u) => u.href.startsWith(redirectUri));
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
    expect(refusals).toEqual([]);
  } finally {
    await context.close();
  }
}, 60_000);
