import { expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import { discover, publicSpa, type Mailbox } from '@portcullis/testing';
import {
  type Browser,
  browserSignInWithMailForFile,
  collectRefusals,
  README_IMG,
  readmeScreenshot,
  submitPassword,
} from '@portcullis/testing/browser';

// README "Sign-up" in real Chromium: the form, the mailed link (a real SMTP server), the
// confirmation and the sign-in it came from, under the pages' CSP.

let mailbox: Mailbox;
let t: TestAuthServer;
let browser: Browser;
let redirectUri: string;
browserSignInWithMailForFile(
  (stack) => ({ auth: t, browser, redirectUri, mailbox } = stack),
  () => ({ SIGNUP: 'open' }),
);

test('sign up from a sign-in, confirm the address from the mail, then finish the sign-in', async () => {
  const client = await publicSpa(t, { redirect_uris: [redirectUri], client_name: 'Example app' });
  const config = await discover(t, client.client_id);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const person = {
    email: `browser-${Date.now().toString(36)}@example.com`,
    password: 'amber lantern at the quay',
  };
  const context = await browser.newContext({ viewport: { width: 520, height: 720 } });
  const page = await context.newPage();
  const refusals: string[] = [];
  collectRefusals(page, refusals);
  try {
    await page.goto(url.href);
    await page.waitForURL(/\/interaction\//);
    const uid = new URL(page.url()).pathname.split('/').pop()!;
    // The sign-in page's "Create an account" link leads here.
    await page.goto(`${t.issuer}/signup?interaction=${uid}`);
    await readmeScreenshot(page, new URL('signup.png', README_IMG));
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill('password123');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').filter({ hasText: 'Choose another password' }).waitFor();
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();

    const mail = await mailbox.next(person.email);
    expect(mail.subject).toBe('Confirm your address for Portcullis');
    const link = mail.links[0]!;
    expect(new URL(link).searchParams.get('interaction')).toBe(uid);
    await page.goto(link);
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page.getByRole('heading', { name: 'Address confirmed' }).waitFor();
    await page.getByRole('link', { name: 'Continue signing in' }).click();

    await submitPassword(page, person);
    await page.waitForURL((u) => u.href.startsWith(redirectUri));
    expect(await page.textContent('body')).toBe('signed in');
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const sub = tokens.claims()!.sub;
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    expect(info).toMatchObject({ email: person.email, email_verified: true });
    expect(refusals).toEqual([]);
  } finally {
    await context.close();
  }
}, 60_000);
