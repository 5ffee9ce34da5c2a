import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createAccountsRepo } from '@portcullis/accounts';
import { ACR } from '@portcullis/claims';
import * as oidc from 'openid-client';
import { Secret } from 'otpauth';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createUser,
  accountSignIn as signInAtAccountPage,
  ageSignIn as ageSessions,
  decodeJwt,
  discover,
  enrolTotp as enrolApp,
  publicSpa,
  REDIRECT_URI,
  submitSecondFactor,
  totpCode,
  type Browser,
} from '@portcullis/testing';
import { createPasskeysRepo } from '../src/data/passkeys-repo.js';

// README "Multi-factor sign-in". The server's TOTP clock is moved by whole 30 s periods
// so that a test can use a fresh code without waiting; codes are computed here.
let offset = 0;
const now = () => Date.now() + offset;
const nextPeriod = () => {
  offset += 30_000;
};
const codeFor = (secret: string) => totpCode(secret, now());

let t: TestAuthServer;
let spa: { client_id: string };
let config: oidc.Configuration;
beforeAll(async () => {
  t = await startTestAuthServer({}, { now });
  spa = await publicSpa(t);
  config = await discover(t, spa.client_id);
});
afterAll(async () => {
  await t.close();
});

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const interactionOf = (url: URL) => /\/interaction\/([^/?]+)/.exec(url.pathname)![1]!;

type User = { id: string; email: string; password: string };

const accountSignIn = (b: Browser, user: User, code?: () => string) =>
  signInAtAccountPage(t, b, user, code);

/** Enrols an authenticator app at the server's clock, then moves the clock a period on. */
async function enrolTotp(b: Browser, user: User) {
  const enrolled = await enrolApp(t, b, user, now());
  nextPeriod();
  return enrolled;
}

const submitFactor = (
  b: Browser,
  at: URL,
  factor: 'totp' | 'recovery',
  form: Record<string, string>,
  stopAt = REDIRECT_URI,
) => submitSecondFactor(t, b, at, factor, form, stopAt);

async function authorizeUrl(extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid email api',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  });
  return { url, verifier };
}

/** A new `require_mfa` client and an authorization URL of it (its verifier thrown away). */
async function requireMfaClient() {
  const strict = await publicSpa(t, { require_mfa: true });
  const c = await discover(t, strict.client_id);
  const url = oidc.buildAuthorizationUrl(c, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
  return { c, url };
}

async function redeem(callback: URL, verifier: string) {
  return oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier });
}

/** Ages the user's sessions (at least one): they read as signed in `seconds` earlier. */
async function ageSignIn(userId: string, seconds: number) {
  expect(await ageSessions(t, userId, seconds)).toBeGreaterThan(0);
}

const factorsOf = async (userId: string) =>
  (await t.admin('GET', `/admin/users/${userId}/factors`)).body as {
    items: { kind: string }[];
    recovery_codes_remaining: number;
  };

/** A passkey row of the user, as enrolment stores one (no sign-in with it here). */
async function addPasskey(userId: string) {
  const id = randomBytes(16).toString('base64url');
  await createPasskeysRepo(t.database.db).create({
    id,
    userId,
    name: 'Key',
    publicKey: new Uint8Array(randomBytes(77)),
    counter: 0,
    transports: [],
    deviceType: 'multiDevice',
    backedUp: true,
  });
  return id;
}

/** Older than the 5 minutes in which a sign-in counts as fresh. */
const STALE = 5 * 60 + 5;

describe('TOTP', () => {
  test('an enrolled user signs in with a password and a code: acr mfa in both tokens', async () => {
    const user = await createUser(t);
    const { secret, recoveryCodes } = await enrolTotp(browser(), user);
    expect(recoveryCodes).toHaveLength(10);

    const b = browser();
    const { url, verifier } = await authorizeUrl();
    const pages: string[] = [];
    const factorStep = await browserLogin(url.href, user, { b, pages });
    expect(factorStep.pathname).toMatch(/^\/interaction\//);
    expect(pages.at(-1)).toContain('Code from your authenticator app');

    const callback = await submitFactor(b, factorStep, 'totp', { code: codeFor(secret) });
    const tokens = await redeem(callback, verifier);
    const id = decodeJwt(tokens.id_token!).payload;
    const at = decodeJwt(tokens.access_token).payload;
    for (const claims of [id, at]) {
      expect(claims.acr).toBe(ACR.mfa);
      expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
      expect(Math.abs(claims.auth_time - Date.now() / 1000)).toBeLessThan(10);
    }
  });

  test('the enrolment page shows the key and a QR code image served by us, and no script', async () => {
    const user = await createUser(t);
    const b = browser();
    const account = await accountSignIn(b, user);
    expect(account).toContain('Set up an authenticator app');
    await b.postForm(`${t.issuer}/account/totp/start`, { csrf: csrfOf(account) });
    const page = await b.get(`${t.issuer}/account/totp`);
    const html = await page.text();
    expect(html).toContain('<img src="/account/totp/qr.svg"');
    expect(html).toMatch(/id="totp-secret">[A-Z2-7 ]{32,}</);
    expect(html).not.toContain('<script');
    expect(page.headers.get('content-security-policy')).not.toContain('script-src');
    const qr = await b.get(`${t.issuer}/account/totp/qr.svg`);
    expect(qr.status).toBe(200);
    expect(qr.headers.get('content-type')).toContain('image/svg+xml');
    expect(await qr.text()).toMatch(/^<svg/);
    // Not signed in: neither the page nor the image.
    expect((await browser().get(`${t.issuer}/account/totp/qr.svg`)).status).toBe(401);
  });

  test('a refreshed access token keeps the sign-in it came from', async () => {
    const user = await createUser(t);
    const { secret } = await enrolTotp(browser(), user);
    const b = browser();
    const { url, verifier } = await authorizeUrl({ scope: 'openid offline_access api' });
    const step = await browserLogin(url.href, user, { b });
    const tokens = await redeem(
      await submitFactor(b, step, 'totp', { code: codeFor(secret) }),
      verifier,
    );
    const first = decodeJwt(tokens.access_token).payload;
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const again = decodeJwt(refreshed.access_token).payload;
    expect(again).toMatchObject({
      acr: ACR.mfa,
      amr: ['pwd', 'otp', 'mfa'],
      auth_time: first.auth_time,
    });
  });

  test('a password-only sign-in says so: acr pwd, amr pwd, auth_time', async () => {
    const user = await createUser(t);
    const { url, verifier } = await authorizeUrl();
    const tokens = await redeem(await browserLogin(url.href, user), verifier);
    for (const token of [tokens.id_token!, tokens.access_token]) {
      const claims = decodeJwt(token).payload;
      expect(claims.acr).toBe(ACR.password);
      expect(claims.amr).toEqual(['pwd']);
      expect(typeof claims.auth_time).toBe('number');
    }
  });

  test('a code works once, a wrong code is refused, and the page stays at the factor', async () => {
    const user = await createUser(t);
    const { secret } = await enrolTotp(browser(), user);
    const code = codeFor(secret);

    const first = browser();
    const a = await authorizeUrl();
    const step = await browserLogin(a.url.href, user, { b: first });
    await submitFactor(first, step, 'totp', { code });

    const second = browser();
    const b2 = await authorizeUrl();
    const step2 = await browserLogin(b2.url.href, user, { b: second });
    const page = await (await second.get(step2.href)).text();
    const uid = interactionOf(step2);
    for (const tried of [code, '000000', 'abc']) {
      const res = await second.postForm(`${t.issuer}/interaction/${uid}/totp`, {
        csrf: csrfOf(page),
        code: tried,
      });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('That code is not valid');
    }
  });

  test('wrong codes are limited per account: 429 with Retry-After, even for the right code', async () => {
    const user = await createUser(t);
    const { secret } = await enrolTotp(browser(), user);
    const b = browser();
    const { url } = await authorizeUrl();
    const step = await browserLogin(url.href, user, { b });
    const page = await (await b.get(step.href)).text();
    const post = (code: string) =>
      b.postForm(`${t.issuer}/interaction/${interactionOf(step)}/totp`, {
        csrf: csrfOf(page),
        code,
      });
    for (let i = 0; i < 5; i++) expect((await post('000000')).status).toBe(400);
    const limited = await post(codeFor(secret));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toContain('Too many wrong codes');
  });
});

describe('recovery codes', () => {
  test('a recovery code signs in once and never again; new codes void the old', async () => {
    const user = await createUser(t);
    const { secret, recoveryCodes } = await enrolTotp(browser(), user);
    const [first, second] = recoveryCodes;

    const b = browser();
    const { url, verifier } = await authorizeUrl();
    const step = await browserLogin(url.href, user, { b });
    const callback = await submitFactor(b, step, 'recovery', {
      recovery_code: first!.toUpperCase(),
    });
    const claims = decodeJwt((await redeem(callback, verifier)).access_token).payload;
    expect(claims.acr).toBe(ACR.mfa);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);

    const again = browser();
    const a2 = await authorizeUrl();
    const step2 = await browserLogin(a2.url.href, user, { b: again });
    const page = await (await again.get(step2.href)).text();
    expect(page).toContain('Use a recovery code');
    const reused = await again.postForm(
      `${t.issuer}/interaction/${interactionOf(step2)}/recovery`,
      {
        csrf: csrfOf(page),
        recovery_code: first!,
      },
    );
    expect(reused.status).toBe(400);

    // New codes (after a sign-in with the factor at the account page) void the unused old ones.
    const account = browser();
    const accountPage = await accountSignIn(account, user, () => codeFor(secret));
    nextPeriod();
    expect(accountPage).toContain('9 unused');
    const regenerated = await account.postForm(`${t.issuer}/account/recovery-codes`, {
      csrf: csrfOf(accountPage),
    });
    const fresh = [...(await regenerated.text()).matchAll(/class="recovery-code">([^<]+)</g)];
    expect(fresh).toHaveLength(10);
    const old = await again.postForm(`${t.issuer}/interaction/${interactionOf(step2)}/recovery`, {
      csrf: csrfOf(page),
      recovery_code: second!,
    });
    expect(old.status).toBe(400);
    const callback2 = await submitFactor(again, step2, 'recovery', {
      recovery_code: fresh[0]![1]!,
    });
    expect(callback2.searchParams.get('code')).toBeTruthy();
  });
});

describe('no way around the second factor', () => {
  /** A user with an app, stopped at the factor step of a new sign-in. */
  async function atFactorStep(client = spa) {
    const user = await createUser(t);
    const { secret } = await enrolTotp(browser(), user);
    const c = await discover(t, client.client_id);
    const b = browser();
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(c, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid api',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const step = await browserLogin(url.href, user, { b });
    const page = await (await b.get(step.href)).text();
    expect(page).toContain('Code from your authenticator app');
    /** Whose sign-in the code at `callback` is. */
    const subjectAt = async (callback: URL) =>
      decodeJwt(
        (await oidc.authorizationCodeGrant(c, callback, { pkceCodeVerifier: verifier })).id_token!,
      ).payload.sub;
    return { user, secret, b, step, uid: interactionOf(step), csrf: csrfOf(page), subjectAt };
  }

  /** Follows redirects from `url`; the last URL (a code would be at REDIRECT_URI). */
  async function follow(b: Browser, url: string): Promise<{ url: string; html: string }> {
    for (let hop = 0; hop < 10; hop++) {
      const res = await b.get(url);
      if (res.status < 300 || res.status >= 400) return { url, html: await res.text() };
      url = new URL(res.headers.get('location')!, url).href;
      if (url.startsWith(REDIRECT_URI)) return { url, html: '' };
    }
    throw new Error('too many redirects');
  }

  test('resuming the authorization without the factor page asks for it again', async () => {
    const { b, uid } = await atFactorStep();
    const end = await follow(b, `${t.issuer}/authorize/${uid}`);
    expect(end.url.startsWith(REDIRECT_URI)).toBe(false);
    expect(end.html).toMatch(/Sign in|Verify it’s you/);
  });

  /** What the interaction pages say of a form posted where it does not belong. */
  const NOT_VALID_HERE = 'This sign-in request has expired or is not valid here.';

  test('consent posted before the factor is refused', async () => {
    const thirdParty = await publicSpa(t, { first_party: false });
    const { user, b, step, uid, csrf, secret, subjectAt } = await atFactorStep(thirdParty);
    const res = await b.postForm(`${t.issuer}/interaction/${uid}/confirm`, { csrf });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    const html = await res.text();
    expect(html).toContain('Sign-in problem');
    expect(html).toContain(NOT_VALID_HERE);
    // The sign-in is still at its factor: the code, then consent, then a code at the client.
    const page = await (await b.get(step.href)).text();
    expect(page).toContain('Code from your authenticator app');
    expect(page).not.toContain('/confirm"');
    const landed = await submitFactor(b, step, 'totp', { code: codeFor(secret) });
    expect(await subjectAt(landed)).toBe(user.id);
  });

  test("another user's code is refused", async () => {
    const { b, uid, csrf } = await atFactorStep();
    const other = await createUser(t);
    const { secret: otherSecret } = await enrolTotp(browser(), other);
    const res = await b.postForm(`${t.issuer}/interaction/${uid}/totp`, {
      csrf,
      code: codeFor(otherSecret),
    });
    expect(res.status).toBe(400);
  });

  test('a finished interaction cannot be replayed', async () => {
    const { b, step, uid, csrf, secret } = await atFactorStep();
    await submitFactor(b, step, 'totp', { code: codeFor(secret) });
    nextPeriod();
    const replay = await b.postForm(`${t.issuer}/interaction/${uid}/totp`, {
      csrf,
      code: codeFor(secret),
    });
    expect(replay.status).toBe(400);
    expect(replay.headers.get('location')).toBeNull();
  });

  test('another password at the factor step does not end it', async () => {
    const { user, b, step, uid, csrf, secret, subjectAt } = await atFactorStep();
    const other = await createUser(t);
    const res = await b.postForm(`${t.issuer}/interaction/${uid}/login`, {
      csrf,
      email: other.email,
      password: other.password,
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    const html = await res.text();
    expect(html).toContain('Sign-in problem');
    expect(html).toContain('This sign-in belongs to another account');
    expect(html).not.toContain(other.email);
    // The step still belongs to the first user: their code finishes it, as them.
    expect(await (await b.get(step.href)).text()).toContain('Code from your authenticator app');
    const landed = await submitFactor(b, step, 'totp', { code: codeFor(secret) });
    expect(await subjectAt(landed)).toBe(user.id);
  });

  test('a password-only session of a user who enrols since then asks for the factor', async () => {
    const user = await createUser(t);
    const b = browser();
    await browserLogin((await authorizeUrl()).url.href, user, { b });
    const { secret } = await enrolTotp(browser(), user);
    const { url, verifier } = await authorizeUrl();
    const pages: string[] = [];
    const step = await browserLogin(url.href, user, { b, pages });
    // The session's password is enough for the first step: only the factor is asked.
    expect(pages).toHaveLength(1);
    expect(pages[0]).toContain('Code from your authenticator app');
    const tokens = await redeem(
      await submitFactor(b, step, 'totp', { code: codeFor(secret) }),
      verifier,
    );
    expect(decodeJwt(tokens.id_token!).payload.acr).toBe(ACR.mfa);
  });

  test('prompt=none on a password-only session that needs the factor: login_required', async () => {
    const user = await createUser(t);
    const b = browser();
    await browserLogin((await authorizeUrl()).url.href, user, { b });
    await enrolTotp(browser(), user);
    const { url } = await authorizeUrl({ prompt: 'none' });
    const end = await browserLogin(url.href, user, { b });
    expect(end.searchParams.get('error')).toBe('login_required');
    expect(end.searchParams.get('code')).toBeNull();
  });
});

describe('a session older than 5 minutes gives its password again before a factor step', () => {
  /** A step-up sign-in (acr_values mfa) started in `b`: its first page asks for the password. */
  async function stepUpShowsPassword(b: Browser) {
    const { url, verifier } = await authorizeUrl({ acr_values: ACR.mfa });
    const first = await b.get(url.href);
    const at = new URL(first.headers.get('location')!, url);
    const page = await (await b.get(at.href)).text();
    expect(page).toContain('name="password"');
    return { verifier, at, page };
  }

  test('no factor yet: the step-up asks for the password, not an app set up on the old sign-in', async () => {
    const user = await createUser(t);
    const b = browser();
    await browserLogin((await authorizeUrl()).url.href, user, { b });
    await ageSignIn(user.id, STALE);

    const { verifier, at, page } = await stepUpShowsPassword(b);
    expect(page).not.toContain('/totp/start');
    // The set-up forms, posted on the old session alone, are refused and show no key.
    const base = `${t.issuer}/interaction/${interactionOf(at)}`;
    const start = await b.postForm(`${base}/totp/start`, { csrf: csrfOf(page) });
    expect(start.status).toBe(400);
    expect(await start.text()).not.toContain('totp-secret');
    expect((await b.get(`${base}/totp/qr.svg`)).status).toBe(400);
    const confirm = await b.postForm(`${base}/totp/confirm`, { csrf: csrfOf(page), code: '1' });
    expect(confirm.status).toBe(400);
    expect(await factorsOf(user.id)).toEqual({ items: [], recovery_codes_remaining: 0 });

    // With the password given again, the app is set up and the sign-in is new.
    const pages: string[] = [];
    const step = await browserLogin(at.href, user, { b, pages });
    expect(pages[0]).toContain('name="password"');
    const factorPage = await (await b.get(step.href)).text();
    const enrol = await b.postForm(`${base}/totp/start`, { csrf: csrfOf(factorPage) });
    expect(enrol.status).toBe(200);
    const enrolPage = await enrol.text();
    const key = /id="totp-secret">([^<]+)</.exec(enrolPage)![1]!.replaceAll(' ', '');
    const confirmed = await b.postForm(`${base}/totp/confirm`, {
      csrf: csrfOf(enrolPage),
      code: codeFor(key),
    });
    nextPeriod();
    expect(confirmed.status).toBe(200);
    const next = /<a href="([^"]+)">Continue</.exec(await confirmed.text())![1]!;
    const landed = await browserLogin(new URL(next.replaceAll('&amp;', '&'), t.issuer).href, user, {
      b,
    });
    const claims = decodeJwt((await redeem(landed, verifier)).access_token).payload;
    expect(claims.acr).toBe(ACR.mfa);
    expect(Math.abs(claims.auth_time - Date.now() / 1000)).toBeLessThan(10);
  });

  test('with an app: the password again, then the code; the old sign-in and a code are not enough', async () => {
    const user = await createUser(t);
    const b = browser();
    // Signed in with the password alone before the app was set up elsewhere.
    await browserLogin((await authorizeUrl()).url.href, user, { b });
    const { secret } = await enrolTotp(browser(), user);
    await ageSignIn(user.id, STALE);

    const { verifier, at, page } = await stepUpShowsPassword(b);
    const base = `${t.issuer}/interaction/${interactionOf(at)}`;
    for (const [factor, form] of [
      ['totp', { code: codeFor(secret) }],
      ['recovery', { recovery_code: 'aaaa-bbbb' }],
    ] as const) {
      const res = await b.postForm(`${base}/${factor}`, { csrf: csrfOf(page), ...form });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }

    const pages: string[] = [];
    const step = await browserLogin(at.href, user, { b, pages });
    expect(pages[0]).toContain('name="password"');
    expect(pages.at(-1)).toContain('Code from your authenticator app');
    nextPeriod();
    const tokens = await redeem(
      await submitFactor(b, step, 'totp', { code: codeFor(secret) }),
      verifier,
    );
    const claims = decodeJwt(tokens.access_token).payload;
    expect(claims.acr).toBe(ACR.mfa);
    expect(Math.abs(claims.auth_time - Date.now() / 1000)).toBeLessThan(10);
  });
});

describe('an enrolment in progress belongs to the session that started it', () => {
  const keyOf = (html: string) => /id="totp-secret">([^<]+)</.exec(html)?.[1]?.replaceAll(' ', '');

  test("another session knowing the password never sees nor confirms the account page's key", async () => {
    const user = await createUser(t);
    const own = browser();
    const account = await accountSignIn(own, user);
    await own.postForm(`${t.issuer}/account/totp/start`, { csrf: csrfOf(account) });
    const ownPage = await (await own.get(`${t.issuer}/account/totp`)).text();
    const ownKey = keyOf(ownPage)!;
    const ownQr = await (await own.get(`${t.issuer}/account/totp/qr.svg`)).text();

    // Someone with the password alone, at the factor step of a require_mfa client.
    const { url } = await requireMfaClient();
    const other = browser();
    const step = await browserLogin(url.href, user, { b: other });
    const factorPage = await (await other.get(step.href)).text();
    const base = `${t.issuer}/interaction/${interactionOf(step)}`;
    expect((await other.get(`${base}/totp/qr.svg`)).status).toBe(404);
    const confirmOwn = await other.postForm(`${base}/totp/confirm`, {
      csrf: csrfOf(factorPage),
      code: codeFor(ownKey),
    });
    expect(confirmOwn.status).toBe(400);
    const started = await other.postForm(`${base}/totp/start`, { csrf: csrfOf(factorPage) });
    const otherPage = await started.text();
    const otherKey = keyOf(otherPage)!;
    expect(otherKey).toMatch(/^[A-Z2-7]{32}$/);
    expect(otherKey).not.toBe(ownKey);
    const otherQr = await (await other.get(`${base}/totp/qr.svg`)).text();
    expect(otherQr).toMatch(/^<svg/);
    expect(otherQr).not.toBe(ownQr);
    // The account page's key confirms nothing at the sign-in, nor does it become a factor.
    const refused = await other.postForm(`${base}/totp/confirm`, {
      csrf: csrfOf(otherPage),
      code: codeFor(ownKey),
    });
    expect(refused.status).toBe(400);
    expect(await factorsOf(user.id)).toEqual({ items: [], recovery_codes_remaining: 0 });

    // Nor is the sign-in's key shown on the account page: the user starts again there.
    const shown = await own.get(`${t.issuer}/account/totp`);
    expect(shown.status).toBe(302);
    expect((await own.get(`${t.issuer}/account/totp/qr.svg`)).status).toBe(404);
    await own.postForm(`${t.issuer}/account/totp/start`, { csrf: csrfOf(account) });
    const again = keyOf(await (await own.get(`${t.issuer}/account/totp`)).text())!;
    expect([ownKey, otherKey]).not.toContain(again);
    const confirmed = await own.postForm(`${t.issuer}/account/totp/confirm`, {
      csrf: csrfOf(account),
      code: codeFor(again),
    });
    nextPeriod();
    expect(confirmed.status).toBe(200);
    // The other session's enrolment is gone with it: its key signs nobody in.
    const late = await other.postForm(`${base}/totp/confirm`, {
      csrf: csrfOf(otherPage),
      code: codeFor(otherKey),
    });
    expect(late.status).toBe(400);
    expect((await factorsOf(user.id)).items).toHaveLength(1);
  });
});

describe('policy', () => {
  test('a require_mfa client: an enrolled user gives the factor, a user without one sets one up or gets no code', async () => {
    const { c, url } = await requireMfaClient();
    const plain = await createUser(t);
    const pages: string[] = [];
    const end = await browserLogin(url.href, plain, { pages });
    expect(end.searchParams.get('code')).toBeNull();
    expect(pages.at(-1)).toContain('requires a second sign-in factor');
    expect(pages.at(-1)).toContain('href="/account"');

    // ... unless it sets up an app right at this step: then the sign-in goes on.
    const b0 = browser();
    const verifier = oidc.randomPKCECodeVerifier();
    const withPkce = oidc.buildAuthorizationUrl(c, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const step0 = await browserLogin(withPkce.href, plain, { b: b0 });
    const factorPage = await (await b0.get(step0.href)).text();
    const base = `${t.issuer}/interaction/${interactionOf(step0)}`;
    const start = await b0.postForm(`${base}/totp/start`, { csrf: csrfOf(factorPage) });
    const enrolPage = await start.text();
    expect(enrolPage).toContain(`<img src="/interaction/${interactionOf(step0)}/totp/qr.svg"`);
    const qr = await b0.get(`${base}/totp/qr.svg`);
    expect(qr.headers.get('content-type')).toContain('image/svg+xml');
    const key = /id="totp-secret">([^<]+)</.exec(enrolPage)![1]!.replaceAll(' ', '');
    expect(
      (await b0.postForm(`${base}/totp/confirm`, { csrf: csrfOf(enrolPage), code: '000000' }))
        .status,
    ).toBe(400);
    const confirmed = await b0.postForm(`${base}/totp/confirm`, {
      csrf: csrfOf(enrolPage),
      code: codeFor(key),
    });
    nextPeriod();
    const shown = await confirmed.text();
    expect([...shown.matchAll(/class="recovery-code"/g)]).toHaveLength(10);
    const next = /<a href="([^"]+)">Continue</.exec(shown)![1]!.replaceAll('&amp;', '&');
    const landed = await browserLogin(new URL(next, t.issuer).href, plain, { b: b0 });
    const tokens = await oidc.authorizationCodeGrant(c, landed, { pkceCodeVerifier: verifier });
    expect(decodeJwt(tokens.id_token!).payload).toMatchObject({
      acr: ACR.mfa,
      amr: ['pwd', 'otp', 'mfa'],
    });
    // Now enrolled: the password alone cannot add another app at a sign-in.
    const b1 = browser();
    const step1 = await browserLogin(url.href, plain, { b: b1 });
    const page1 = await (await b1.get(step1.href)).text();
    expect(page1).not.toContain('/totp/start');
    const again = await b1.postForm(`${t.issuer}/interaction/${interactionOf(step1)}/totp/start`, {
      csrf: csrfOf(page1),
    });
    expect(again.status).toBe(400);

    const enrolled = await createUser(t);
    const { secret } = await enrolTotp(browser(), enrolled);
    const b = browser();
    const step = await browserLogin(url.href, enrolled, { b });
    const callback = await submitFactor(b, step, 'totp', { code: codeFor(secret) });
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  test('acr_values=urn:portcullis:acr:mfa needs a second factor; the ID token names it', async () => {
    const plain = await createUser(t);
    const asked = await authorizeUrl({ acr_values: ACR.mfa });
    const end = await browserLogin(asked.url.href, plain);
    expect(end.searchParams.get('code')).toBeNull();

    const user = await createUser(t);
    const { secret } = await enrolTotp(browser(), user);
    const b = browser();
    const { url, verifier } = await authorizeUrl({ acr_values: ACR.mfa });
    const step = await browserLogin(url.href, user, { b });
    const tokens = await redeem(
      await submitFactor(b, step, 'totp', { code: codeFor(secret) }),
      verifier,
    );
    expect(decodeJwt(tokens.id_token!).payload.acr).toBe(ACR.mfa);
  });

  test('max_age=0 asks for the password again, then the factor', async () => {
    const user = await createUser(t);
    const { secret } = await enrolTotp(browser(), user);
    const b = browser();
    const first = await authorizeUrl();
    await submitFactor(b, await browserLogin(first.url.href, user, { b }), 'totp', {
      code: codeFor(secret),
    });
    nextPeriod();
    const { url } = await authorizeUrl({ max_age: '0' });
    const pages: string[] = [];
    const step = await browserLogin(url.href, user, { b, pages });
    expect(pages[0]).toContain('name="password"');
    expect(pages.at(-1)).toContain('Code from your authenticator app');
    const callback = await submitFactor(b, step, 'totp', { code: codeFor(secret) });
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  test('changing factors needs a fresh sign-in with the factor', async () => {
    const user = await createUser(t);
    const b = browser();
    await accountSignIn(b, user);
    // Enrolled: the password-only session no longer opens the account page.
    const { secret } = await enrolTotp(b, user);
    const page = await b.get(`${t.issuer}/account`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('sign in again');
    const remove = await b.postForm(`${t.issuer}/account/totp/remove`, { csrf: 'x' });
    expect(remove.status).toBe(401);

    const account = await accountSignIn(b, user, () => codeFor(secret));
    const removed = await b.postForm(`${t.issuer}/account/totp/remove`, {
      csrf: csrfOf(account),
    });
    expect(removed.status).toBe(200);
    expect(await removed.text()).toContain('Authenticator app: not set up');
    const kinds = async (kind: string) =>
      (
        (await t.admin('GET', `/admin/audit?kind=${kind}&limit=100`)).body['items'] as {
          subject: string;
        }[]
      ).filter((e) => e.subject === user.id).length;
    expect(await kinds('mfa_enrolled')).toBe(1);
    expect(await kinds('recovery_codes_generated')).toBe(1);
    expect(await kinds('mfa_removed')).toBe(1);
    // No factor left: the recovery codes went with it.
    expect((await t.admin('GET', `/admin/users/${user.id}/factors`)).body).toEqual({
      items: [],
      recovery_codes_remaining: 0,
    });
  });
});

describe('changing factors needs a sign-in within 5 minutes, with the factor', () => {
  const SIGN_IN_AGAIN = 'To change how you sign in, sign in again first';
  const PASSKEYS_SIGN_IN_AGAIN = 'Sign in again to change your passkeys.';

  test('a sign-in older than 5 minutes cannot set up an authenticator app or a passkey', async () => {
    const user = await createUser(t);
    const b = browser();
    const csrf = csrfOf(await accountSignIn(b, user));
    expect((await b.postForm(`${t.issuer}/account/totp/start`, { csrf })).status).toBe(303);
    const enrolPage = await (await b.get(`${t.issuer}/account/totp`)).text();
    const secret = /id="totp-secret">([^<]+)</.exec(enrolPage)![1]!.replaceAll(' ', '');

    await ageSignIn(user.id, STALE);
    const confirm = await b.postForm(`${t.issuer}/account/totp/confirm`, {
      csrf,
      code: codeFor(secret),
    });
    expect(confirm.status).toBe(401);
    expect(await confirm.text()).toContain(SIGN_IN_AGAIN);
    const restart = await b.postForm(`${t.issuer}/account/totp/start`, { csrf });
    expect(restart.status).toBe(401);
    const options = await b.postForm(`${t.issuer}/account/passkeys/options`, { csrf });
    expect(options.status).toBe(403);
    expect(((await options.json()) as { error_description: string }).error_description).toBe(
      PASSKEYS_SIGN_IN_AGAIN,
    );
    const passkey = await b.postForm(`${t.issuer}/account/passkeys`, {
      csrf,
      response: '{}',
      name: 'Late',
    });
    expect(passkey.status).toBe(403);
    expect(await passkey.text()).toContain(PASSKEYS_SIGN_IN_AGAIN);
    expect(await factorsOf(user.id)).toEqual({ items: [], recovery_codes_remaining: 0 });

    // The same session and form, signed in again within the 5 minutes: the code turns it on.
    await ageSignIn(user.id, -STALE);
    const fresh = await b.postForm(`${t.issuer}/account/totp/confirm`, {
      csrf,
      code: codeFor(secret),
    });
    nextPeriod();
    expect(fresh.status).toBe(200);
    expect((await factorsOf(user.id)).items).toEqual([expect.objectContaining({ kind: 'totp' })]);
  });

  /** A sign-in that may not change factors: the account page, passkey and app removal refused. */
  async function expectFactorsKept(b: ReturnType<typeof browser>, passkey: string, csrf: string) {
    expect((await b.get(`${t.issuer}/account`)).status).toBe(401);
    const removePasskey = await b.postForm(`${t.issuer}/account/passkeys/${passkey}/delete`, {
      csrf,
    });
    expect(removePasskey.status).toBe(403);
    expect(await removePasskey.text()).toContain(PASSKEYS_SIGN_IN_AGAIN);
    const removeApp = await b.postForm(`${t.issuer}/account/totp/remove`, { csrf });
    expect(removeApp.status).toBe(401);
    expect(await removeApp.text()).toContain(SIGN_IN_AGAIN);
  }

  test('a sign-in with the factor older than 5 minutes cannot remove a passkey or the app', async () => {
    const user = await createUser(t);
    const { secret } = await enrolTotp(browser(), user);
    const passkey = await addPasskey(user.id);
    const b = browser();
    const csrf = csrfOf(await accountSignIn(b, user, () => codeFor(secret)));
    nextPeriod();

    await ageSignIn(user.id, STALE);
    await expectFactorsKept(b, passkey, csrf);
    expect((await factorsOf(user.id)).items.map((f) => f.kind).sort()).toEqual(['passkey', 'totp']);

    // Within the 5 minutes, the same forms work.
    await ageSignIn(user.id, -STALE);
    const removed = await b.postForm(`${t.issuer}/account/passkeys/${passkey}/delete`, { csrf });
    expect(removed.status).toBe(303);
    expect((await factorsOf(user.id)).items.map((f) => f.kind)).toEqual(['totp']);
  });

  test('a password-only sign-in of a user who has a factor cannot remove one or make codes', async () => {
    const user = await createUser(t);
    const b = browser();
    // Signed in with the password alone while the user had no factor: fresh then.
    const csrf = csrfOf(await accountSignIn(b, user));
    const { secret } = await enrolTotp(browser(), user);
    const passkey = await addPasskey(user.id);

    await expectFactorsKept(b, passkey, csrf);
    const codes = await b.postForm(`${t.issuer}/account/recovery-codes`, { csrf });
    expect(codes.status).toBe(401);
    expect(await factorsOf(user.id)).toMatchObject({
      items: [
        expect.objectContaining({ kind: 'totp' }),
        expect.objectContaining({ kind: 'passkey' }),
      ],
      recovery_codes_remaining: 10,
    });

    // The same browser signed in with the app's code may.
    const account = await accountSignIn(b, user, () => codeFor(secret));
    nextPeriod();
    const removed = await b.postForm(`${t.issuer}/account/totp/remove`, {
      csrf: csrfOf(account),
    });
    expect(removed.status).toBe(200);
    expect((await factorsOf(user.id)).items.map((f) => f.kind)).toEqual(['passkey']);
  });
});

describe('at rest', () => {
  test("the app's key is stored sealed, recovery codes only as SHA-256 digests", async () => {
    const user = await createUser(t);
    const { secret, recoveryCodes } = await enrolTotp(browser(), user);
    const bytes = Buffer.from(Secret.fromBase32(secret).buffer);
    const totpRows = JSON.stringify(await t.database.db('mfa_totp').where({ user_id: user.id }));
    expect(totpRows).toContain('secret_enc');
    for (const encoded of [
      secret,
      secret.toLowerCase(),
      bytes.toString('hex'),
      bytes.toString('base64'),
      bytes.toString('base64url'),
    ])
      expect(totpRows).not.toContain(encoded);

    const codeRows = await t.database.db('mfa_recovery_codes').where({ user_id: user.id });
    expect(codeRows).toHaveLength(10);
    for (const row of codeRows) expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    const stored = JSON.stringify(codeRows).toLowerCase();
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) {
      expect(stored).not.toContain(code.toLowerCase());
      expect(stored).not.toContain(code.toLowerCase().replaceAll('-', ''));
    }
  });
});

describe('admin', () => {
  test("every password door sees the factor registry's answer: pending no, app or passkey yes", async () => {
    const accounts = createAccountsRepo(t.database.db);
    const user = await createUser(t);
    const agree = async (expected: boolean) => {
      expect((await factorsOf(user.id)).items.length > 0).toBe(expected);
      expect((await accounts.verifyCredentials(user.email, user.password))?.secondFactor).toBe(
        expected,
      );
    };
    await agree(false);
    const b = browser();
    await b.postForm(`${t.issuer}/account/totp/start`, {
      csrf: csrfOf(await accountSignIn(b, user)),
    });
    await agree(false);
    await enrolTotp(browser(), user);
    await agree(true);
    await t.admin('DELETE', `/admin/users/${user.id}/factors`);
    await agree(false);
    await addPasskey(user.id);
    await agree(true);
  });

  test("lists a user's factors and resets them, with an audit row; then the password alone signs in", async () => {
    const user = await createUser(t);
    await enrolTotp(browser(), user);
    const listed = await t.admin('GET', `/admin/users/${user.id}/factors`);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({
      items: [{ kind: 'totp', id: 'totp', name: 'Authenticator app' }],
      recovery_codes_remaining: 10,
    });

    const reset = await t.admin('DELETE', `/admin/users/${user.id}/factors`);
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ removed: { totp: 1 }, recovery_codes_removed: 10 });
    const audit = await t.admin('GET', '/admin/audit?kind=mfa_reset');
    expect((audit.body['items'] as { subject: string }[])[0]!.subject).toBe(user.id);
    expect((await t.admin('GET', `/admin/users/${user.id}/factors`)).body).toEqual({
      items: [],
      recovery_codes_remaining: 0,
    });

    const { url, verifier } = await authorizeUrl();
    const tokens = await redeem(await browserLogin(url.href, user), verifier);
    expect(decodeJwt(tokens.access_token).payload.acr).toBe(ACR.password);
  });

  test('an unknown user is 404; no admin token is 401', async () => {
    expect((await t.admin('GET', '/admin/users/nobody/factors')).status).toBe(404);
    expect((await t.admin('DELETE', '/admin/users/nobody/factors')).status).toBe(404);
    expect((await t.admin('GET', '/admin/users/nobody/factors', undefined, null)).status).toBe(401);
  });
});

describe('the per-IP limit', () => {
  test('20 wrong codes from one address, over several users, refuse the next user too', async () => {
    // A server of its own: this test spends its address's whole allowance.
    const own = await startTestAuthServer();
    try {
      const client = await publicSpa(own);
      const c = await discover(own, client.client_id);
      const stepOf = async () => {
        const user = await createUser(own);
        const { secret } = await enrolApp(own, browser(), user);
        const b = browser();
        const url = oidc.buildAuthorizationUrl(c, {
          redirect_uri: REDIRECT_URI,
          scope: 'openid',
          code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
          code_challenge_method: 'S256',
        });
        const step = await browserLogin(url.href, user, { b });
        const page = await (await b.get(step.href)).text();
        return (code: string) =>
          b.postForm(`${own.issuer}/interaction/${interactionOf(step)}/totp`, {
            csrf: csrfOf(page),
            code: code || totpCode(secret, Date.now() + 30_000),
          });
      };
      // Enrolment confirmations count against the same address: all users first.
      const steps = [];
      for (let u = 0; u < 6; u++) steps.push(await stepOf());
      for (const post of steps.slice(0, 5)) {
        for (let i = 0; i < 4; i++) expect((await post('000000')).status).toBe(400);
      }
      const limited = await steps[5]!('');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await own.close();
    }
  });
});
