import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  askEmailChange,
  browser,
  browserLogin,
  createUser,
  discover,
  enrolTotp,
  pkceSignIn,
  publicSpa,
  REDIRECT_URI,
  startMailbox,
  until,
  type Browser,
  type Mailbox,
} from '@portcullis/testing';

// Forgotten password (README "Forgotten password"): the pages, the mail at a real SMTP
// server, and what a reset ends; on PGlite, or PostgreSQL and Redis with DATABASE_URL/REDIS_URL.

let t: TestAuthServer;
let mailbox: Mailbox;
beforeAll(async () => {
  mailbox = await startMailbox();
  t = await startTestAuthServer(
    { SMTP_URL: mailbox.url, ACCOUNT_MAIL_ADDRESS_LIMIT: '3', ACCOUNT_MAIL_IP_LIMIT: '1000' },
    { mailOutbox: { retryBaseMs: 50 } },
  );
});
afterAll(async () => {
  await t?.close();
  await mailbox?.close();
});

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const NEW_PASSWORD = 'a new password, long enough';

/** Asks for a link as a browser would: the form, then its POST. */
async function forgot(b: Browser, email: string, query = '') {
  const form = await b.get(`${t.issuer}/password/forgot${query}`);
  expect(form.status).toBe(200);
  const html = await form.text();
  const interaction = /name="interaction" value="([^"]+)"/.exec(html)?.[1];
  const res = await b.postForm(`${t.issuer}/password/forgot`, {
    csrf: csrfOf(html),
    email,
    ...(interaction ? { interaction } : {}),
  });
  return { status: res.status, html: await res.text(), res };
}

/** Opens the mailed link and submits `password`. */
async function reset(b: Browser, link: string, password: string) {
  const form = await b.get(link);
  const html = await form.text();
  if (form.status !== 200) return { status: form.status, html };
  const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const interaction = /name="interaction" value="([^"]+)"/.exec(html)?.[1];
  const res = await b.postForm(`${t.issuer}/password/reset`, {
    csrf: csrfOf(html),
    token,
    password,
    ...(interaction ? { interaction } : {}),
  });
  return { status: res.status, html: await res.text() };
}

async function resetLink(email: string): Promise<string> {
  const mail = await mailbox.next(email);
  const link = mail.links.find((l) => l.includes('/password/reset?token='));
  if (!link) throw new Error(`no reset link in ${mail.text}`);
  return link;
}

/** Whether the sign-in page takes `password` (it moves on, rather than showing the form again). */
async function signsIn(email: string, password: string): Promise<boolean> {
  const spa = await publicSpa(t);
  const config = await discover(t, spa.client_id);
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
  try {
    const end = await browserLogin(url.href, { email, password });
    return end.href.startsWith(REDIRECT_URI);
  } catch {
    return false;
  }
}

describe('forgotten password', () => {
  test('the mailed link resets the password; sessions and refresh tokens from before end', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const b = browser();
    const verifier = oidc.randomPKCECodeVerifier();
    const authorize = async (extra: Record<string, string> = {}) =>
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid offline_access',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        ...extra,
      });
    const callback = await browserLogin((await authorize()).href, user, { b });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
    });

    const asked = await forgot(browser(), user.email);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain('If an account exists for');
    expect(asked.res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const link = await resetLink(user.email);
    expect(link.startsWith(`${t.issuer}/password/reset?token=`)).toBe(true);

    // Opening the link (a mail scanner does) does not use it up.
    expect((await browser().get(link)).status).toBe(200);
    const done = await reset(browser(), link, NEW_PASSWORD);
    expect(done.status).toBe(200);
    expect(done.html).toContain('Password changed');

    const changed = await mailbox.next(user.email);
    expect(changed.subject).toContain('password was changed');

    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    const silent = await b.get((await authorize({ prompt: 'none' })).href);
    let location = silent.headers.get('location') ?? '';
    for (let hop = 0; hop < 5 && !location.startsWith(REDIRECT_URI); hop++) {
      location = (await b.get(new URL(location, t.issuer).href)).headers.get('location') ?? '';
    }
    expect(new URL(location).searchParams.get('error')).toBe('login_required');

    expect(await signsIn(user.email, user.password)).toBe(false);
    expect(await signsIn(user.email, NEW_PASSWORD)).toBe(true);

    // Used once: the same link again is refused with a page inviting a new request.
    const again = await reset(browser(), link, 'yet another password');
    expect(again.status).toBe(400);
    expect(again.html).toContain('Ask for a new link');
    expect(await signsIn(user.email, NEW_PASSWORD)).toBe(true);

    const audit = await t.admin('GET', `/admin/audit?kind=password_reset`);
    expect(JSON.stringify(audit.body)).toContain('self_service');
  });

  test('a reset by the mailed link ends a pending e-mail change: its confirm link is refused', async () => {
    const owner = await createUser(t);
    // Someone holding the password asks to move the account to their address.
    const stolen = `thief-${owner.id.slice(0, 8)}@example.com`;
    const {
      b: thief,
      confirmLink,
      token,
      notice,
    } = await askEmailChange(t, mailbox, owner, stolen);
    expect(notice.subject).toContain('change of your e-mail address');

    // The owner takes the account back through the mailed link.
    await forgot(browser(), owner.email);
    expect((await reset(browser(), await resetLink(owner.email), NEW_PASSWORD)).status).toBe(200);

    expect((await thief.get(confirmLink)).status).toBe(400);
    const confirmed = await thief.postForm(`${t.issuer}/account/email/confirm`, { token });
    expect(confirmed.status).toBe(400);
    expect(await confirmed.text()).toContain('expired or was already used');
    const row = await t.database.db('users').where({ id: owner.id }).first();
    expect(row.email).toBe(owner.email);
    expect(await signsIn(owner.email, NEW_PASSWORD)).toBe(true);
  });

  test("a reset proves the address: an unverified sign-up (another's, perhaps) is verified with the owner's password", async () => {
    const squatter = await createUser(t);
    await t.database.db('users').where({ id: squatter.id }).update({ email_verified_at: null });
    expect(await signsIn(squatter.email, squatter.password)).toBe(false);
    expect((await forgot(browser(), squatter.email)).status).toBe(200);
    expect((await reset(browser(), await resetLink(squatter.email), NEW_PASSWORD)).status).toBe(
      200,
    );
    expect(await signsIn(squatter.email, squatter.password)).toBe(false);
    expect(await signsIn(squatter.email, NEW_PASSWORD)).toBe(true);
  });

  test('a password the policy refuses shows the form again and leaves the link working', async () => {
    const user = await createUser(t);
    await forgot(browser(), user.email);
    const link = await resetLink(user.email);
    const short = await reset(browser(), link, 'short');
    expect(short.status).toBe(400);
    expect(short.html).toContain('at least 8 characters');
    expect((await reset(browser(), link, NEW_PASSWORD)).status).toBe(200);
  });

  test('an expired link is refused', async () => {
    const user = await createUser(t);
    await forgot(browser(), user.email);
    const link = await resetLink(user.email);
    await t.database
      .db('account_tokens')
      .where({ user_id: user.id, purpose: 'password_reset' })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expect((await browser().get(link)).status).toBe(400);
    const res = await reset(browser(), link, NEW_PASSWORD);
    expect(res.status).toBe(400);
    expect(res.html).toContain('expired or was already used');
    expect(await signsIn(user.email, user.password)).toBe(true);
  });

  test('an unknown address gets the same answer and no mail', async () => {
    const user = await createUser(t);
    const unknown = `nobody-${Date.now()}@example.com`;
    const a = await forgot(browser(), unknown);
    const b = await forgot(browser(), user.email);
    expect(a.status).toBe(b.status);
    const strip = (html: string, email: string) => html.replaceAll(email, 'EMAIL');
    expect(strip(a.html, unknown)).toBe(strip(b.html, user.email));
    await resetLink(user.email);
    const queued = await t.database.db('mail_outbox').where({ recipient: unknown });
    expect(queued).toEqual([]);
    expect(mailbox.to(unknown)).toEqual([]);
  });

  test('the same answer while the SMTP server refuses; the mail follows once it accepts', async () => {
    const user = await createUser(t);
    mailbox.refuse(true);
    try {
      const asked = await forgot(browser(), user.email);
      expect(asked.status).toBe(200);
      expect(asked.html).toContain('If an account exists for');
      await until(
        () => t.database.db('mail_outbox').where({ recipient: user.email }).first(),
        (row) => row?.last_error != null,
        10_000,
      );
    } finally {
      mailbox.refuse(false);
    }
    expect((await resetLink(user.email)).length).toBeGreaterThan(0);
  });

  test('requests for one address beyond ACCOUNT_MAIL_ADDRESS_LIMIT get 429, known or not', async () => {
    for (const email of [(await createUser(t)).email, `nobody2-${Date.now()}@example.com`]) {
      for (let i = 0; i < 3; i++) expect((await forgot(browser(), email)).status).toBe(200);
      const over = await forgot(browser(), email);
      expect(over.status).toBe(429);
      expect(Number(over.res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(over.html).toContain('Too many requests');
    }
  });

  test('a form without its cookie is refused (CSRF)', async () => {
    const b = browser();
    const form = await (await b.get(`${t.issuer}/password/forgot`)).text();
    const res = await browser().postForm(`${t.issuer}/password/forgot`, {
      csrf: csrfOf(form),
      email: 'someone@example.com',
    });
    expect(res.status).toBe(403);
    const bad = await browser().postForm(`${t.issuer}/password/reset`, {
      csrf: 'x',
      token: 'y',
      password: NEW_PASSWORD,
    });
    expect(bad.status).toBe(403);
  });

  test('a reset keeps the second factor: signing in after it still asks for the code', async () => {
    const user = await createUser(t);
    await enrolTotp(t, browser(), user);
    await forgot(browser(), user.email);
    expect((await reset(browser(), await resetLink(user.email), NEW_PASSWORD)).status).toBe(200);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const pages: string[] = [];
    const b = browser();
    const at = await browserLogin(url.href, { ...user, password: NEW_PASSWORD }, { b, pages });
    expect(at.href.startsWith(REDIRECT_URI)).toBe(false);
    expect(await (await b.get(at.href)).text()).toContain('name="code"');
  });

  test('from a sign-in, the link leads back to it', async () => {
    const user = await createUser(t);
    await forgot(browser(), user.email, '?interaction=abc123');
    const link = await resetLink(user.email);
    expect(new URL(link).searchParams.get('interaction')).toBe('abc123');
    const done = await reset(browser(), link, NEW_PASSWORD);
    expect(done.html).toContain('href="/interaction/abc123"');
  });

  test('German pages and mail for a German browser', async () => {
    const user = await createUser(t);
    const b = browser();
    const headers = { 'accept-language': 'de-DE,de;q=0.9' };
    const form = await (await b.request(`${t.issuer}/password/forgot`, { headers })).text();
    expect(form).toContain('Passwort vergessen?');
    const res = await b.request(`${t.issuer}/password/forgot`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(form), email: user.email }).toString(),
    });
    expect(await res.text()).toContain('Wenn es ein Konto');
    expect((await mailbox.next(user.email)).subject).toContain('zurücksetzen');
  });

  test('an administrator forces a reset: the password and sessions stop working, a link is mailed', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const tokens = await pkceSignIn(config, user, { scope: 'openid offline_access' });

    const forced = await t.admin('POST', `/admin/users/${user.id}/password-reset`);
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ id: user.id, reset_link_mailed: true });
    expect(JSON.stringify(forced.body)).not.toMatch(/password"/);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await signsIn(user.email, user.password)).toBe(false);

    const mail = await mailbox.next(user.email);
    expect(mail.text).toContain('An administrator reset the password');
    const link = mail.links.find((l) => l.includes('/password/reset?token='))!;
    expect((await reset(browser(), link, NEW_PASSWORD)).status).toBe(200);
    expect(await signsIn(user.email, NEW_PASSWORD)).toBe(true);

    const audit = await t.admin('GET', '/admin/audit?kind=password_reset');
    const entry = (audit.body.items as { subject: string; detail: object }[]).find(
      (e) => e.subject === user.id && 'forced' in e.detail,
    );
    expect(entry?.detail).toMatchObject({ via: 'admin', forced: true, mailed: true });
    expect((await t.admin('POST', '/admin/users/no-such-user/password-reset')).status).toBe(404);
  });

  test('two instances on one database send each mail once', async () => {
    const other = await t.startInstance();
    try {
      const users = await Promise.all(Array.from({ length: 8 }, () => createUser(t)));
      // Alternating instances, all at once: both workers run over the same rows.
      await Promise.all(
        users.map(async (user, i) => {
          const issuer = i % 2 ? other.issuer : t.issuer;
          const b = browser();
          const html = await (await b.get(`${issuer}/password/forgot`)).text();
          const res = await b.postForm(`${issuer}/password/forgot`, {
            csrf: csrfOf(html),
            email: user.email,
          });
          expect(res.status).toBe(200);
        }),
      );
      const emails = users.map((u) => u.email);
      const rows = await until(
        () => t.database.db('mail_outbox').whereIn('recipient', emails).whereNotNull('sent_at'),
        (r) => r.length === emails.length,
        10_000,
      );
      expect(rows).toHaveLength(emails.length);
      for (const email of emails) expect(mailbox.to(email)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});
