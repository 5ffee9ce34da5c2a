import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, jest, test } from '@jest/globals';
import { ACR } from '@portcullis/claims';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import * as oidc from 'openid-client';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  ageSignIn,
  askEmailChange,
  browser as cookieBrowser,
  createUser,
  decodeJwt,
  discover,
  freePort,
  pkceSignIn,
  publicSpa,
  signsInSilently,
  type Mailbox,
} from '@portcullis/testing';
import {
  addVirtualAuthenticator,
  browserSignInWithMailForFile,
  readmeScreenshot,
  README_IMG,
  submitPassword,
  type Browser,
  type CDPSession,
  type Page,
} from '@portcullis/testing/browser';
import { createPasskeysRepo } from '../src/data/passkeys-repo.js';
import { createPasskeyService, PasskeyError } from '../src/identity/mfa/passkeys.js';

// Passkeys in real Chromium (README "Passkeys"): a CDP virtual authenticator stands in for
// the device. WebAuthn wants a secure context whose host is the RP id, so the server's
// issuer is http://localhost:<port>.

// A shared machine can be slow; a step that hangs fails first, naming itself (20 s).
jest.setTimeout(60_000);

let t: TestAuthServer;
let browser: Browser;
let redirectUri: string;
let mailbox: Mailbox;
browserSignInWithMailForFile((stack) => ({ auth: t, browser, redirectUri, mailbox } = stack));

/** A public SPA client landing on the test's redirect URI; `extra` adds metadata. */
const client = (extra: Record<string, unknown> = {}) =>
  publicSpa(t, { redirect_uris: [redirectUri], client_name: 'Example app', ...extra });

type User = Awaited<ReturnType<typeof createUser>>;

interface Session {
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  close(): Promise<void>;
}

/** A fresh browser profile with its own virtual authenticator. */
async function openBrowser(): Promise<Session> {
  // Small pages: the screenshots go into the README.
  const context = await browser.newContext({ viewport: { width: 520, height: 720 } });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const { cdp, authenticatorId } = await addVirtualAuthenticator(page);

  return { page, cdp, authenticatorId, close: () => context.close() };
}

/** Runs `steps` in a fresh browser profile (openBrowser), closed afterwards whatever happens. */
async function withBrowser(steps: (s: Session) => Promise<void>): Promise<void> {
  const s = await openBrowser();
  try {
    await steps(s);
  } finally {
    await s.close();
  }
}

/**
 * Swaps the session's authenticator for a new one (another device; `options` as
 * addVirtualAuthenticator takes them): the old one's passkeys go with it.
 */
async function replaceAuthenticator(s: Session, options: Record<string, unknown> = {}) {
  await s.cdp.send('WebAuthn.removeVirtualAuthenticator', {
    authenticatorId: s.authenticatorId,
  });
  await addVirtualAuthenticator(s.page, options);
}

/**
 * A passkey of `userId` held by the session's authenticator and registered with the server
 * (written to the table as enrolment would), for sign-in tests that need no enrolment.
 */
async function injectPasskey(
  s: Session,
  userId: string,
  options: { userHandleOf?: string; signCount?: number; storedCounter?: number } = {},
) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const id = randomBytes(16);
  await s.cdp.send('WebAuthn.addCredential', {
    authenticatorId: s.authenticatorId,
    credential: {
      credentialId: id.toString('base64'),
      isResidentCredential: true,
      rpId: 'localhost',
      privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      userHandle: Buffer.from(options.userHandleOf ?? userId).toString('base64'),
      signCount: options.signCount ?? 0,
    },
  });
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]),
  );
  const credentialId = id.toString('base64url');
  const created = await createPasskeysRepo(t.database.db).create({
    id: credentialId,
    userId,
    name: 'Injected',
    publicKey: Uint8Array.from(cose),
    counter: options.storedCounter ?? 0,
    transports: ['internal'],
    deviceType: 'singleDevice',
    backedUp: false,
  });
  expect(created).toBe(true);
  return credentialId;
}

/** Starts a code flow in the page; returns what finishes it. */
async function authorize(page: Page, clientId: string, extra: Record<string, string> = {}) {
  const config = await discover(t, clientId);
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email api',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  });
  await page.goto(url.href);
  await page.waitForURL((u) => u.pathname.startsWith('/interaction/'));
  return {
    uid: new URL(page.url()).pathname.split('/')[2]!,
    /** The tokens, and the sign-in they carry (ID token and access token agree). */
    async tokens() {
      await page.waitForURL((u) => u.href.startsWith(redirectUri));
      const redirect = new URL(page.url());
      const tokens = await oidc.authorizationCodeGrant(config, redirect, {
        pkceCodeVerifier: verifier,
      });
      const id = decodeJwt(tokens.id_token!).payload;
      const access = decodeJwt(tokens.access_token).payload;
      expect({ acr: access.acr, amr: access.amr }).toEqual({ acr: id.acr, amr: id.amr });
      return { sub: id.sub as string, acr: id.acr as string, amr: id.amr as string[] };
    },
  };
}

const passkeyButton = (page: Page) => page.getByRole('button', { name: 'Sign in with a passkey' });

/**
 * Clicks "Sign in with a passkey" and keeps what the page would post (the CSRF token and the
 * assertion) instead of sending it: the test decides where it goes.
 */
async function captureAssertion(page: Page) {
  const captured = new Promise<{ csrf: string; response: string }>((resolve) => {
    void page.route(
      (url) => url.pathname.endsWith('/passkey'),
      async (route) => {
        const form = new URLSearchParams(route.request().postData() ?? '');
        resolve({ csrf: form.get('csrf')!, response: form.get('response')! });
        // No content: the page stays where it is.
        await route.fulfill({ status: 204 });
      },
    );
  });
  await passkeyButton(page).click();
  const form = await captured;
  await page.unroute((url) => url.pathname.endsWith('/passkey'));
  return form;
}

/** POSTs a captured passkey form with the page's cookies; no redirects followed. */
const postPasskey = (page: Page, uid: string, form: { csrf: string; response: string }) =>
  page.request.post(`${t.issuer}/interaction/${uid}/passkey`, { form, maxRedirects: 0 });

const usePasskeyButton = (page: Page) => page.getByRole('button', { name: 'Use a passkey' });

/** The sign-in the tokens of a passkey sign-in carry: `user`, the mfa acr, with `amr`. */
const mfaSignIn = (user: User, amr: string[]) => ({ sub: user.id, acr: ACR.mfa, amr });

/** The page refused the passkey, saying `message`. */
async function expectPasskeyRefused(page: Page, message: string) {
  await page.getByRole('heading', { name: 'Passkey not accepted' }).waitFor();
  await expect(page.getByRole('alert').first().textContent()).resolves.toBe(message);
}

/** The CSRF token of the page's first form. */
const csrfOf = (page: Page) => page.locator('input[name="csrf"]').first().inputValue();

/** What the server answers to a passkey assertion whose challenge is gone. */
const SPENT_CHALLENGE = 'This passkey request has expired or was already used.';

/**
 * A new user with a passkey in the session's authenticator (injectPasskey, with `options`),
 * and a code flow of a new client started in the session's page (authorize).
 */
async function passkeySignInStarted(s: Session, options: Parameters<typeof injectPasskey>[2] = {}) {
  const user = await createUser(t);
  const spa = await client();
  await injectPasskey(s, user.id, options);
  const flow = await authorize(s.page, spa.client_id);
  return { user, flow };
}

describe('passkey sign-in', () => {
  test('a passkey alone signs in: no email typed, tokens with amr hwk+mfa and the mfa acr', () =>
    withBrowser(async (s) => {
      const { user, flow } = await passkeySignInStarted(s);
      await expect(passkeyButton(s.page).isVisible()).resolves.toBe(true);
      await readmeScreenshot(s.page, new URL('passkey-sign-in.png', README_IMG));
      await passkeyButton(s.page).click();
      await expect(flow.tokens()).resolves.toEqual(mfaSignIn(user, ['hwk', 'mfa']));
    }));

  test('the passkey button waits for its script: before it runs, a click cannot post an empty form', () =>
    withBrowser(async (s) => {
      const { user, flow } = await passkeySignInStarted(s);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await s.page.route(
        (url) => url.pathname === '/passkeys.js',
        async (route) => {
          await held;
          await route.continue();
        },
      );
      await s.page.reload({ waitUntil: 'commit' });
      const button = passkeyButton(s.page);
      await button.waitFor();
      await expect(button.isDisabled()).resolves.toBe(true);
      release();
      // click() waits for the button to be enabled: by the script, once it handles the form.
      await button.click();
      await expect(flow.tokens()).resolves.toEqual(mfaSignIn(user, ['hwk', 'mfa']));
    }));

  test('a passkey opens nothing for an address not yet verified (SIGNUP_VERIFY=before-sign-in)', () =>
    withBrowser(async (s) => {
      const { user } = await passkeySignInStarted(s);
      await t.database.db('users').where({ id: user.id }).update({ email_verified_at: null });
      await passkeyButton(s.page).click();
      await s.page.getByText('Verify your e-mail address first').waitFor();
      expect(s.page.url()).not.toContain(redirectUri);
    }));

  test('a synced passkey is stored as backed up and signs in with amr swk', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const spa = await client();
      await replaceAuthenticator(s, { defaultBackupEligibility: true, defaultBackupState: true });
      await accountPasswordSignIn(s.page, user);
      await enrolPasskey(s.page, 'Synced');
      const [stored] = await createPasskeysRepo(t.database.db).listByUser(user.id);
      expect(stored).toMatchObject({ deviceType: 'multiDevice', backedUp: true });

      const flow = await authorize(s.page, spa.client_id, { prompt: 'login' });
      await passkeyButton(s.page).click();
      await expect(flow.tokens()).resolves.toEqual(mfaSignIn(user, ['swk', 'mfa']));
    }));

  test('the login page loads only our script file: script-src self, no inline script', () =>
    withBrowser(async (s) => {
      const spa = await client();
      await authorize(s.page, spa.client_id);
      const csp = (await s.page.reload())!.headers()['content-security-policy']!;
      expect(csp).toContain("default-src 'none'; script-src 'self'; connect-src 'self';");
      // A string, evaluated in the page: this file is compiled without the DOM library.
      const scripts = await s.page.evaluate(
        '[...document.scripts].map((e) => ({ src: e.getAttribute("src"), text: e.textContent }))',
      );
      expect(scripts).toEqual([{ src: '/passkeys.js', text: '' }]);
    }));

  test('a discoverable passkey whose user handle names another user is refused', () =>
    withBrowser(async (s) => {
      const other = await createUser(t);
      await passkeySignInStarted(s, { userHandleOf: other.id });
      await passkeyButton(s.page).click();
      await expectPasskeyRefused(s.page, 'This passkey belongs to another account.');
    }));
});

/** Signs in at the account page with email and password; lands on /account. */
async function accountPasswordSignIn(page: Page, user: User) {
  await page.goto(`${t.issuer}/account/sign-in`);
  await submitPassword(page, user);
  await page.waitForURL(`${t.issuer}/account`);
}

/** Signs in at the account page with a passkey alone; lands on /account. */
async function accountPasskeySignIn(page: Page) {
  await page.goto(`${t.issuer}/account/sign-in`);
  await passkeyButton(page).click();
  await page.waitForURL(`${t.issuer}/account`);
}

/**
 * Adds a passkey named `name` from the account page, with the page's authenticator; returns
 * the recovery codes the page shows (none when the user's codes stand).
 */
async function enrolPasskey(page: Page, name: string): Promise<string[]> {
  await page.fill('#passkey-name', name);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('heading', { name: /^(Passkey added|Your recovery codes)$/ }).waitFor();
  await expect(page.getByRole('status').textContent()).resolves.toContain(name);
  return page.locator('.recovery-code').allTextContents();
}

/** The user's unused recovery codes, as the admin API counts them. */
const recoveryCodesLeft = async (userId: string) =>
  (await t.admin('GET', `/admin/users/${userId}/factors`)).body.recovery_codes_remaining as number;

const passkeyItems = (page: Page) => page.locator('#passkeys li strong').allTextContents();

describe('passkeys from the account page', () => {
  test('enrol, then sign in with the passkey alone and as the second factor after the password', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const spa = await client();
      const repo = createPasskeysRepo(t.database.db);
      await accountPasswordSignIn(s.page, user);
      await expect(s.page.locator('#passkeys').textContent()).resolves.toContain(
        'No passkeys yet.',
      );
      // The first factor comes with ten recovery codes, shown once.
      const codes = await enrolPasskey(s.page, 'Laptop');
      expect(codes).toHaveLength(10);
      expect(new Set(codes).size).toBe(10);
      expect(await recoveryCodesLeft(user.id)).toBe(10);
      const [stored] = await repo.listByUser(user.id);
      expect(stored).toMatchObject({
        name: 'Laptop',
        counter: expect.any(Number),
        deviceType: 'singleDevice',
        backedUp: false,
        transports: ['internal'],
        lastUsedAt: null,
      });

      // Changing factors now wants a sign-in with one: the passkey alone, no email typed.
      await s.page.goto(`${t.issuer}/account`);
      await expect(s.page.textContent('main')).resolves.toContain('sign in again first');
      await accountPasskeySignIn(s.page);
      expect(await passkeyItems(s.page)).toEqual(['Laptop']);
      await readmeScreenshot(s.page, new URL('passkey-account.png', README_IMG));

      const alone = await authorize(s.page, spa.client_id, { prompt: 'login' });
      await passkeyButton(s.page).click();
      await expect(alone.tokens()).resolves.toEqual(mfaSignIn(user, ['hwk', 'mfa']));

      // The password is no longer enough: the factor page offers the passkey.
      const second = await authorize(s.page, spa.client_id, { prompt: 'login' });
      await submitPassword(s.page, user);
      const usePasskey = usePasskeyButton(s.page);
      await usePasskey.waitFor();
      await usePasskey.click();
      await expect(second.tokens()).resolves.toEqual(mfaSignIn(user, ['pwd', 'hwk', 'mfa']));
      const [used] = await repo.listByUser(user.id);
      expect(used!.lastUsedAt).toBeInstanceOf(Date);
      expect(used!.counter).toBeGreaterThan(stored!.counter);
    }));

  test("a recovery code shown at the first passkey's enrolment signs in once in its place", () =>
    withBrowser((s) =>
      withBrowser(async (other) => {
        const user = await createUser(t);
        const spa = await client();
        await accountPasswordSignIn(s.page, user);
        const [code] = await enrolPasskey(s.page, 'Laptop');

        // Another browser, without the passkey: the password, then the recovery code.
        const flow = await authorize(other.page, spa.client_id);
        await submitPassword(other.page, user);
        await other.page.getByText('Use a recovery code').click();
        await other.page.fill('#recovery_code', code!);
        await other.page.getByRole('button', { name: 'Use this code' }).click();
        await expect(flow.tokens()).resolves.toEqual(mfaSignIn(user, ['pwd', 'otp', 'mfa']));
        expect(await recoveryCodesLeft(user.id)).toBe(9);
      }),
    ));

  test('rename and remove; a removed passkey signs nobody in', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const spa = await client();
      await accountPasswordSignIn(s.page, user);
      expect(await enrolPasskey(s.page, 'Phone')).toHaveLength(10);
      await accountPasskeySignIn(s.page);
      // A second device: one authenticator holds one passkey per account (the server
      // names the user's passkeys in excludeCredentials).
      await replaceAuthenticator(s);
      // Not the first factor: the codes shown with the first one stand.
      expect(await enrolPasskey(s.page, 'Security key')).toEqual([]);
      expect(await recoveryCodesLeft(user.id)).toBe(10);
      await s.page.goto(`${t.issuer}/account`);
      expect(await passkeyItems(s.page)).toEqual(['Phone', 'Security key']);

      const phone = s.page.locator('#passkeys li', { hasText: 'Phone' });
      await phone.locator('input[name="name"]').fill('Work phone');
      await phone.getByRole('button', { name: 'Rename' }).click();
      await s.page.waitForURL(`${t.issuer}/account#passkeys`);
      expect(await passkeyItems(s.page)).toEqual(['Work phone', 'Security key']);

      // The recovery codes stand while a passkey is left, and go with the last one.
      for (const [name, codesLeft] of [
        ['Work phone', 10],
        ['Security key', 0],
      ] as const) {
        const item = s.page.locator('#passkeys li', { hasText: name });
        await item.getByRole('button', { name: 'Remove' }).click();
        await s.page.locator('#passkeys li', { hasText: name }).waitFor({ state: 'detached' });
        expect(await recoveryCodesLeft(user.id)).toBe(codesLeft);
      }
      await expect(s.page.locator('#passkeys').textContent()).resolves.toContain(
        'No passkeys yet.',
      );
      await expect(s.page.locator('main').textContent()).resolves.not.toContain('Recovery codes');
      await expect(createPasskeysRepo(t.database.db).listByUser(user.id)).resolves.toEqual([]);

      // The authenticator still holds the credentials; the server no longer knows them.
      await authorize(s.page, spa.client_id, { prompt: 'login' });
      await passkeyButton(s.page).click();
      await expectPasskeyRefused(s.page, 'This passkey is not registered here.');
    }));

  // docs/security.md "What a recovery ends": the user's removal of a second factor.
  test('removing a passkey ends the other sessions, tokens and a pending e-mail change; this browser stays', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const config = await discover(t, (await client()).client_id);
      // Another browser signed in to an app, and someone with the password asking for their address.
      const other = cookieBrowser();
      const tokens = await pkceSignIn(config, user, {
        scope: 'openid offline_access api',
        b: other,
        redirectUri,
      });
      const thief = await askEmailChange(
        t,
        mailbox,
        user,
        `thief-${user.id.slice(0, 8)}@example.com`,
      );
      // Both alive (asked before the passkey: with a factor, a password session is asked for it).
      expect(await signsInSilently(config, other, redirectUri)).toBe(true);
      expect((await thief.b.get(`${t.issuer}/account/sessions`)).status).toBe(200);
      await accountPasswordSignIn(s.page, user);
      await enrolPasskey(s.page, 'Laptop');
      await accountPasskeySignIn(s.page);

      await s.page
        .locator('#passkeys li', { hasText: 'Laptop' })
        .getByRole('button', { name: 'Remove' })
        .click();
      await s.page.locator('#passkeys li', { hasText: 'Laptop' }).waitFor({ state: 'detached' });

      expect((await s.page.goto(`${t.issuer}/account/sessions`))?.status()).toBe(200);
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      expect(await signsInSilently(config, other, redirectUri)).toBe(false);
      expect((await thief.b.get(`${t.issuer}/account/sessions`)).status).toBe(401);
      const confirmed = await cookieBrowser().postForm(`${t.issuer}/account/email/confirm`, {
        token: thief.token,
      });
      expect(confirmed.status).toBe(400);
      expect((await t.admin('GET', `/admin/users/${user.id}`)).body.email).toBe(user.email);
    }));

  test('step-up: a password session asked for the mfa acr finishes with a passkey', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const spa = await client();
      const first = await authorize(s.page, spa.client_id);
      await submitPassword(s.page, user);
      await expect(first.tokens()).resolves.toMatchObject({ acr: ACR.password, amr: ['pwd'] });

      await injectPasskey(s, user.id);
      const stepUp = await authorize(s.page, spa.client_id, { acr_values: ACR.mfa });
      // The session's password stands: only the second factor is asked for.
      await usePasskeyButton(s.page).click();
      await expect(stepUp.tokens()).resolves.toEqual(mfaSignIn(user, ['pwd', 'hwk', 'mfa']));
    }));

  test('an account keeps at most 10 passkeys: the page says so', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const repo = createPasskeysRepo(t.database.db);
      await injectPasskey(s, user.id);
      for (let i = 0; i < 9; i++) {
        await repo.create({
          id: randomBytes(16).toString('base64url'),
          userId: user.id,
          name: `Key ${i}`,
          publicKey: new Uint8Array(randomBytes(77)),
          counter: 0,
          transports: [],
          deviceType: 'multiDevice',
          backedUp: true,
        });
      }
      await accountPasskeySignIn(s.page);
      await s.page.getByRole('button', { name: 'Add a passkey' }).click();
      const error = s.page.locator('[data-passkey-error]:visible');
      await error.waitFor();
      await expect(error.textContent()).resolves.toBe(
        'An account keeps at most 10 passkeys. Remove one first.',
      );
      expect(await repo.listByUser(user.id)).toHaveLength(10);
    }));

  test('a user without a factor adds a passkey at a sign-in that requires one', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const strict = await client({ require_mfa: true });
      const flow = await authorize(s.page, strict.client_id);
      await submitPassword(s.page, user);
      await s.page.getByRole('button', { name: 'Set up an authenticator app' }).waitFor();
      await s.page.getByRole('button', { name: 'Add a passkey' }).click();
      // The first factor's recovery codes, shown once before the sign-in goes on.
      await s.page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      expect(await s.page.locator('.recovery-code').count()).toBe(10);
      expect(await recoveryCodesLeft(user.id)).toBe(10);
      await s.page.getByRole('link', { name: 'Continue' }).click();
      await expect(flow.tokens()).resolves.toEqual(mfaSignIn(user, ['pwd', 'hwk', 'mfa']));
      const repo = createPasskeysRepo(t.database.db);
      expect(await repo.listByUser(user.id)).toEqual([
        expect.objectContaining({ name: 'Passkey', deviceType: 'singleDevice' }),
      ]);

      // Now the password asks for that passkey, and a second one cannot be added this way.
      const again = await authorize(s.page, strict.client_id, { prompt: 'login' });
      await submitPassword(s.page, user);
      await usePasskeyButton(s.page).waitFor();
      await expect(s.page.getByRole('button', { name: 'Add a passkey' }).count()).resolves.toBe(0);
      const csrf = await csrfOf(s.page);
      const refused = await s.page.request.post(
        `${t.issuer}/interaction/${again.uid}/passkey/register/options`,
        { form: { csrf } },
      );
      expect(refused.status()).toBe(400);
      expect((await refused.json()).error_description).toBe(
        'A passkey is added here only at a sign-in of an account without a second factor.',
      );
      expect(await repo.listByUser(user.id)).toHaveLength(1);
    }));

  test('a sign-in older than 5 minutes adds no passkey at a factor step until the password is given again', () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const first = await authorize(s.page, (await client()).client_id);
      await submitPassword(s.page, user);
      await expect(first.tokens()).resolves.toMatchObject({ acr: ACR.password, amr: ['pwd'] });
      expect(await ageSignIn(t, user.id, 5 * 60 + 5)).toBeGreaterThan(0);

      const flow = await authorize(s.page, (await client({ require_mfa: true })).client_id);
      // The old sign-in is no first factor now: the password form, and no set-up.
      await s.page.locator('input[name="password"]').waitFor();
      await expect(s.page.getByRole('button', { name: 'Add a passkey' }).count()).resolves.toBe(0);
      const csrf = await csrfOf(s.page);
      const options = await s.page.request.post(
        `${t.issuer}/interaction/${flow.uid}/passkey/register/options`,
        { form: { csrf } },
      );
      expect(options.status()).toBe(400);
      expect((await options.json()).error_description).toBe(
        'A passkey is added here only at a sign-in of an account without a second factor.',
      );
      const posted = await s.page.request.post(
        `${t.issuer}/interaction/${flow.uid}/passkey/register`,
        { form: { csrf, response: '{}', name: 'Planted' }, maxRedirects: 0 },
      );
      expect(posted.status()).toBe(400);
      const repo = createPasskeysRepo(t.database.db);
      expect(await repo.listByUser(user.id)).toEqual([]);

      // The password again: now the passkey is added, and the sign-in is a new one.
      await submitPassword(s.page, user);
      await s.page.getByRole('button', { name: 'Add a passkey' }).click();
      await s.page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      await s.page.getByRole('link', { name: 'Continue' }).click();
      await expect(flow.tokens()).resolves.toEqual(mfaSignIn(user, ['pwd', 'hwk', 'mfa']));
      expect(await repo.listByUser(user.id)).toHaveLength(1);
    }));

  test("the admin API lists a user's passkeys and its reset removes them", () =>
    withBrowser(async (s) => {
      const user = await createUser(t);
      const id = await injectPasskey(s, user.id);
      const listed = await t.admin('GET', `/admin/users/${user.id}/factors`);
      expect(listed.status).toBe(200);
      expect(listed.body.items).toEqual([
        expect.objectContaining({ kind: 'passkey', id, name: 'Injected' }),
      ]);
      const reset = await t.admin('DELETE', `/admin/users/${user.id}/factors`);
      expect(reset.body.removed).toMatchObject({ passkey: 1 });
      await expect(createPasskeysRepo(t.database.db).listByUser(user.id)).resolves.toEqual([]);
    }));

  test("another user's passkey is refused at the second-factor step", () =>
    withBrowser(async (s) => {
      const alice = await createUser(t);
      const bob = await createUser(t);
      const spa = await client();
      const alices = await injectPasskey(s, alice.id);
      const bobs = await injectPasskey(s, bob.id);
      await authorize(s.page, spa.client_id);
      // A tampered page (or a relayed assertion): the browser is told to use Bob's passkey.
      const offered: { id: string }[][] = [];
      await s.page.route(
        (url) => url.pathname.endsWith('/passkey/options'),
        async (route) => {
          const options = await (await route.fetch()).json();
          offered.push(options.allowCredentials);
          await route.fulfill({
            json: { ...options, allowCredentials: [{ id: bobs, type: 'public-key' }] },
          });
        },
      );
      await submitPassword(s.page, alice);
      await usePasskeyButton(s.page).click();
      await s.page.getByRole('heading', { name: 'Passkey not accepted' }).waitFor();
      // The server offered Alice's passkey only.
      expect(offered).toEqual([[expect.objectContaining({ id: alices })]]);
      await expectPasskeyRefused(s.page, 'This passkey belongs to another account.');
    }));

  test("enrolment needs the account page's fresh session and its CSRF token", () =>
    withBrowser(async (s) => {
      const options = await s.page.request.post(`${t.issuer}/account/passkeys/options`, {
        form: { csrf: 'x' },
      });
      expect(options.status()).toBe(403);
      expect((await options.json()).error).toBe('invalid_request');
      const enrol = await s.page.request.post(`${t.issuer}/account/passkeys`, {
        form: { csrf: 'x', response: '{}', name: 'x' },
        maxRedirects: 0,
      });
      expect(enrol.status()).toBe(403);
      await accountPasswordSignIn(s.page, await createUser(t));
      const forged = await s.page.request.post(`${t.issuer}/account/passkeys/options`, {
        form: { csrf: 'forged' },
      });
      expect(forged.status()).toBe(403);
    }));
});

describe('passkey assertions are checked', () => {
  test('a signature counter that does not grow is refused (a cloned authenticator)', () =>
    withBrowser(async (s) => {
      // The server saw counter 10; this copy of the key is at 5 and signs 6.
      const { user } = await passkeySignInStarted(s, { signCount: 5, storedCounter: 10 });
      await passkeyButton(s.page).click();
      await expectPasskeyRefused(s.page, 'The passkey could not be verified.');
      const [stored] = await createPasskeysRepo(t.database.db).listByUser(user.id);
      expect(stored).toMatchObject({ counter: 10, lastUsedAt: null });
    }));

  test('a replayed assertion is refused: of the same response posted twice at once, one signs in', () =>
    withBrowser(async (s) => {
      const { flow } = await passkeySignInStarted(s);
      const form = await captureAssertion(s.page);
      const answers = await Promise.all([
        postPasskey(s.page, flow.uid, form),
        postPasskey(s.page, flow.uid, form),
      ]);
      expect(answers.map((a) => a.status()).sort()).toEqual([303, 400]);
      const refused = answers.find((a) => a.status() === 400)!;
      expect(await refused.text()).toContain(SPENT_CHALLENGE);
      const later = await postPasskey(s.page, flow.uid, form);
      expect(later.status()).toBe(400);
    }));

  test('an assertion made for another origin or relying party is refused', () =>
    withBrowser(async (s) => {
      const repo = createPasskeysRepo(t.database.db);
      const { flow } = await passkeySignInStarted(s);
      const binding = `interaction:${flow.uid}`;
      // The browser signed for this server's origin; a server at another origin (a
      // phishing site relaying it) or with another RP id must not accept it.
      const elsewhere = createPasskeyService(repo, {
        rpId: 'localhost',
        origin: 'http://localhost:1',
        rpName: 'Elsewhere',
      });
      const first = await captureAssertion(s.page);
      await expect(elsewhere.authenticate(binding, first.response)).rejects.toEqual(
        new PasskeyError('verification_failed'),
      );
      // Its challenge was spent by that attempt: the right server refuses it too.
      expect((await postPasskey(s.page, flow.uid, first)).status()).toBe(400);

      await s.page.goto(`${t.issuer}/interaction/${flow.uid}`);
      const otherRp = createPasskeyService(repo, {
        rpId: 'example.com',
        origin: t.issuer,
        rpName: 'Elsewhere',
      });
      const second = await captureAssertion(s.page);
      await expect(otherRp.authenticate(binding, second.response)).rejects.toEqual(
        new PasskeyError('verification_failed'),
      );

      // A clientDataJSON edited to name another origin breaks the signature.
      await s.page.goto(`${t.issuer}/interaction/${flow.uid}`);
      const third = await captureAssertion(s.page);
      const assertion = JSON.parse(third.response);
      const clientData = JSON.parse(
        Buffer.from(assertion.response.clientDataJSON, 'base64url').toString(),
      );
      assertion.response.clientDataJSON = Buffer.from(
        JSON.stringify({ ...clientData, origin: 'http://localhost:1' }),
      ).toString('base64url');
      const edited = await postPasskey(s.page, flow.uid, {
        csrf: third.csrf,
        response: JSON.stringify(assertion),
      });
      expect(edited.status()).toBe(400);
      expect(await edited.text()).toContain('The passkey could not be verified.');
    }));

  test('one assertion posted to two instances at once signs in once', () =>
    withBrowser(async (s) => {
      // A second process of the same deployment: same database, issuer and cookie keys.
      const port = await freePort();
      const other = await t.startInstance({ AUTH_PORT: String(port), ISSUER: t.issuer });
      try {
        const { flow } = await passkeySignInStarted(s);
        const form = await captureAssertion(s.page);
        // Cookies are not port-bound: the interaction's cookie goes to both.
        const answers = await Promise.all(
          [t.issuer, `http://localhost:${port}`].map((base) =>
            s.page.request.post(`${base}/interaction/${flow.uid}/passkey`, {
              form,
              maxRedirects: 0,
            }),
          ),
        );
        expect(answers.map((a) => a.status()).sort()).toEqual([303, 400]);
        // Refused for its spent challenge (the counter check would catch it too, but not
        // for a passkey that keeps no counter).
        const refused = answers.find((a) => a.status() === 400)!;
        expect(await refused.text()).toContain(SPENT_CHALLENGE);
      } finally {
        await other.close();
      }
    }));

  test('an expired challenge is refused', () =>
    withBrowser(async (s) => {
      const { flow } = await passkeySignInStarted(s);
      const form = await captureAssertion(s.page);
      // Three minutes later, as the database sees it.
      await t.database.db.raw(
        "update webauthn_challenges set expires_at = now() - interval '1 second' where binding = ?",
        [`interaction:${flow.uid}`],
      );
      const late = await postPasskey(s.page, flow.uid, form);
      expect(late.status()).toBe(400);
      expect(await late.text()).toContain(SPENT_CHALLENGE);
    }));

  test('one sign-in holds at most 5 challenges: asking again drops the oldest', () =>
    withBrowser(async (s) => {
      const spa = await client();
      const flow = await authorize(s.page, spa.client_id);
      const csrf = await csrfOf(s.page);
      const issued: string[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await s.page.request.post(
          `${t.issuer}/interaction/${flow.uid}/passkey/options`,
          { form: { csrf } },
        );
        expect(res.status()).toBe(200);
        issued.push((await res.json()).challenge);
      }
      const rows = await t.database
        .db('webauthn_challenges')
        .where({ binding: `interaction:${flow.uid}` })
        .pluck('challenge');
      expect(rows.sort()).toEqual(issued.slice(3).sort());
    }));

  test('garbage in the response field is a 400 page, not a 500', () =>
    withBrowser(async (s) => {
      const spa = await client();
      const flow = await authorize(s.page, spa.client_id);
      const csrf = await csrfOf(s.page);
      for (const response of [
        '',
        'not json',
        '{"id":"x"}',
        JSON.stringify({ id: 'a'.repeat(5000) }),
      ]) {
        const res = await postPasskey(s.page, flow.uid, { csrf, response });
        expect(res.status()).toBe(400);
        expect(await res.text()).toContain('The passkey response is not valid.');
      }
      const forged = await postPasskey(s.page, flow.uid, { csrf: 'forged', response: '{}' });
      expect(forged.status()).toBe(403);
    }));
});
