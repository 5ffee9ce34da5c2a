import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  accountSignIn,
  askEmailChange,
  ageSignIn,
  browser,
  createUser,
  discover,
  enrolTotp,
  pkceSignIn,
  publicSpa,
  signsInSilently,
  startMailbox,
  totpCode,
  type Browser,
  type Mailbox,
} from '@portcullis/testing';

// README "Your account": self-service on the account page, and the admin API's session control.
let t: TestAuthServer;
let mailbox: Mailbox;
let config: oidc.Configuration;
beforeAll(async () => {
  mailbox = await startMailbox();
  t = await startTestAuthServer({ SMTP_URL: mailbox.url });
  config = await discover(t, (await publicSpa(t, { client_name: 'Public SPA' })).client_id);
});
afterAll(async () => {
  await t?.close();
  await mailbox?.close();
});

const SCOPE = 'openid offline_access api';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
type User = { id: string; email: string; password: string };

/** A browser signed in at the account page; returns it with the page's CSRF token. */
async function atAccountPage(user: Pick<User, 'email' | 'password'>) {
  const b = browser();
  const page = await accountSignIn(t, b, user);
  return { b, csrf: csrfOf(page) };
}

/** Another browser signed in to an app: its session cookie and its tokens. */
async function inAnApp(user: Pick<User, 'email' | 'password'>) {
  const b = browser();
  const tokens = await pkceSignIn(config, user, { scope: SCOPE, b });
  return { b, tokens };
}

/** Whether the browser's session still signs it in to the app without the password form. */
const stillSignedIn = (b: Browser) => signsInSilently(config, b);

const refreshes = (refreshToken: string) =>
  oidc.refreshTokenGrant(config, refreshToken).then(
    () => true,
    () => false,
  );

async function auditKinds(subject: string): Promise<string[]> {
  const res = await t.admin('GET', '/admin/audit?limit=100');
  return (res.body.items as { kind: string; subject: string }[])
    .filter((e) => e.subject === subject)
    .map((e) => e.kind);
}

describe('change password', () => {
  test("ends another browser's session and refresh token, keeps this browser signed in, and mails the user", async () => {
    const user = await createUser(t);
    const other = await inAnApp(user);
    await sleep(5); // the change's instant is after the other sign-in's, to the millisecond
    const { b, csrf } = await atAccountPage(user);
    const german = await b.request(`${t.issuer}/account/password`, {
      headers: { 'accept-language': 'de-CH, en;q=0.5' },
    });
    expect(await german.text()).toContain('<h1>Passwort ändern</h1>');

    const res = await b.postForm(`${t.issuer}/account/password`, {
      csrf,
      current_password: user.password,
      new_password: 'a brand new passphrase',
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Your password is changed');

    // This browser: still signed in, still fresh.
    expect((await b.get(`${t.issuer}/account`)).status).toBe(200);
    expect((await b.get(`${t.issuer}/account/sessions`)).status).toBe(200);
    // The other: its session and its refresh token stopped.
    expect(await refreshes(other.tokens.refresh_token!)).toBe(false);
    expect(await stillSignedIn(other.b)).toBe(false);
    // Only the new password signs in.
    await expect(pkceSignIn(config, user, { scope: SCOPE })).rejects.toThrow(/form POST/);
    await expect(
      pkceSignIn(config, { ...user, password: 'a brand new passphrase' }, { scope: SCOPE }),
    ).resolves.toMatchObject({ access_token: expect.any(String) });

    const mail = await mailbox.next(user.email);
    expect(mail.subject).toBe('Your password was changed');
    expect(await auditKinds(user.id)).toContain('password_changed');
  });

  test('a wrong current password or a password the policy refuses changes nothing', async () => {
    const user = await createUser(t);
    const { b, csrf } = await atAccountPage(user);
    const wrong = await b.postForm(`${t.issuer}/account/password`, {
      csrf,
      current_password: 'not my password',
      new_password: 'a brand new passphrase',
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('Your current password is not right.');
    const weak = await b.postForm(`${t.issuer}/account/password`, {
      csrf,
      current_password: user.password,
      new_password: 'short',
    });
    expect(weak.status).toBe(400);
    expect(await weak.text()).toContain('The new password is not allowed');
    await expect(pkceSignIn(config, user, { scope: SCOPE })).resolves.toMatchObject({
      access_token: expect.any(String),
    });
  });

  test('without a fresh sign-in, or without the form token, the change is refused', async () => {
    const user = await createUser(t);
    const { b, csrf } = await atAccountPage(user);
    const noToken = await b.postForm(`${t.issuer}/account/password`, {
      csrf: 'forged',
      current_password: user.password,
      new_password: 'a brand new passphrase',
    });
    expect(noToken.status).toBe(403);
    await ageSignIn(t, user.id, 10 * 60);
    const page = await b.get(`${t.issuer}/account/password`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('sign in again first');
    const post = await b.postForm(`${t.issuer}/account/password`, {
      csrf,
      current_password: user.password,
      new_password: 'a brand new passphrase',
    });
    expect(post.status).toBe(401);
    await expect(pkceSignIn(config, user, { scope: SCOPE })).resolves.toMatchObject({
      access_token: expect.any(String),
    });
  });
});

describe('change e-mail', () => {
  const newAddress = () => `new-${Math.random().toString(36).slice(2, 10)}@example.com`;

  async function requestChange(user: User, address: string) {
    const { b, csrf } = await atAccountPage(user);
    const res = await b.postForm(`${t.issuer}/account/email`, {
      csrf,
      email: address,
      current_password: user.password,
    });
    return { b, csrf, res };
  }

  test('a link mailed to the new address; GET shows a button, POST changes it once; the old address is told', async () => {
    const user = await createUser(t);
    const address = newAddress();
    const { res } = await requestChange(user, address);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`We sent a link to ${address}`);
    const notice = await mailbox.next(user.email);
    expect(notice.subject).toBe('A change of your e-mail address was requested');
    const mail = await mailbox.next(address);
    const link = mail.links.find((l) => l.includes('/account/email/confirm'))!;
    expect(link).toMatch(new RegExp(`^${t.issuer}/account/email/confirm\\?token=`));
    const token = new URL(link).searchParams.get('token')!;

    // A prefetch (two GETs) uses nothing up.
    const anyone = browser();
    expect((await anyone.get(link)).status).toBe(200);
    const shown = await anyone.get(link);
    expect(await shown.text()).toContain(address);
    const confirmed = await anyone.postForm(`${t.issuer}/account/email/confirm`, { token });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain(`Your address is now ${address}`);

    const old = await mailbox.next(user.email);
    expect(old.subject).toBe('Your e-mail address was changed');
    expect(old.text).toContain(address);
    // How to recover, should it not have been the owner.
    expect(old.links).toContain(`${t.issuer}/password/forgot`);
    const row = await t.database.db('users').where({ id: user.id }).first();
    expect(row).toMatchObject({ email: address, email_verified_at: expect.any(Date) });
    await expect(
      pkceSignIn(config, { ...user, email: address }, { scope: SCOPE }),
    ).resolves.toMatchObject({ access_token: expect.any(String) });
    await expect(pkceSignIn(config, user, { scope: SCOPE })).rejects.toThrow(/form POST/);
    const audit = await t.admin('GET', '/admin/audit?kind=email_changed&limit=100');
    expect(audit.body.items.find((e: { subject: string }) => e.subject === user.id)).toMatchObject({
      detail: { from: user.email, to: address },
    });

    // Used: refused the second time.
    const again = await anyone.postForm(`${t.issuer}/account/email/confirm`, { token });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('expired or was already used');
    expect((await anyone.get(link)).status).toBe(400);
  });

  test('an expired link is refused; an address taken meanwhile gives a clear error', async () => {
    const user = await createUser(t);
    const address = newAddress();
    await requestChange(user, address);
    const token = new URL((await mailbox.next(address)).links[0]!).searchParams.get('token')!;
    await t.database
      .db('account_tokens')
      .where({ user_id: user.id })
      .update({
        expires_at: new Date(Date.now() - 1000),
      });
    const expired = await browser().postForm(`${t.issuer}/account/email/confirm`, { token });
    expect(expired.status).toBe(400);

    const address2 = newAddress();
    await requestChange(user, address2);
    const token2 = new URL((await mailbox.next(address2)).links[0]!).searchParams.get('token')!;
    await t.admin('POST', '/admin/users', {
      email: address2.toUpperCase(),
      password: 'someone elses password',
      roles: [],
    });
    const taken = await browser().postForm(`${t.issuer}/account/email/confirm`, {
      token: token2,
    });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain('That address belongs to another account.');
  });

  test('a wrong password, an invalid or taken address sends nothing', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const { b, csrf } = await atAccountPage(user);
    const post = (form: Record<string, string>) =>
      b.postForm(`${t.issuer}/account/email`, { csrf, ...form });
    const address = newAddress();
    expect((await post({ email: address, current_password: 'wrong' })).status).toBe(400);
    expect((await post({ email: 'not an address', current_password: user.password })).status).toBe(
      400,
    );
    expect((await post({ email: other.email, current_password: user.password })).status).toBe(409);
    expect(mailbox.to(address)).toHaveLength(0);
  });
});

// docs/security.md "What a recovery ends": each door of the account page and of the mail.
describe('what a change of credential or owner ends', () => {
  const newAddress = () => `new-${Math.random().toString(36).slice(2, 10)}@example.com`;

  /** Someone holding the password asks, in their browser, to move the account to their address. */
  async function thiefAsksForAddress(user: User) {
    const address = newAddress();
    const { b, token, notice } = await askEmailChange(t, mailbox, user, address);
    return { thief: b, address, token, notice };
  }

  const confirm = (token: string) =>
    browser().postForm(`${t.issuer}/account/email/confirm`, { token });

  test('the old address is told at once, with a link that cancels the change while it is pending', async () => {
    const user = await createUser(t);
    const { thief, address, token, notice } = await thiefAsksForAddress(user);
    expect(notice.subject).toBe('A change of your e-mail address was requested');
    expect(notice.text).toContain(address);
    const cancel = notice.links.find((l) => l.includes('/account/email/cancel?token='))!;
    expect(cancel.startsWith(`${t.issuer}/account/email/cancel?token=`)).toBe(true);

    // A scanner's GETs use nothing up; the page asks with a button.
    const owner = browser();
    expect((await owner.get(cancel)).status).toBe(200);
    const shown = await (await owner.get(cancel)).text();
    expect(shown).toContain(address);
    const cancelToken = /name="token" value="([^"]+)"/.exec(shown)![1]!;
    const cancelled = await owner.postForm(`${t.issuer}/account/email/cancel`, {
      token: cancelToken,
    });
    expect(cancelled.status).toBe(200);
    const page = await cancelled.text();
    expect(page).toContain(`your address stays ${user.email}`);
    expect(page).toContain('href="/password/forgot"');

    // The change is dead, and so is the session of whoever asked for it.
    expect((await confirm(token)).status).toBe(400);
    const row = await t.database.db('users').where({ id: user.id }).first();
    expect(row.email).toBe(user.email);
    expect((await thief.get(`${t.issuer}/account/sessions`)).status).toBe(401);
    // Once only.
    const again = await owner.postForm(`${t.issuer}/account/email/cancel`, { token: cancelToken });
    expect(again.status).toBe(400);
    expect((await owner.get(cancel)).status).toBe(400);
    expect(await auditKinds(user.id)).toEqual(
      expect.arrayContaining(['email_change_requested', 'email_change_cancelled']),
    );
  });

  test('the notice and the cancel page in German for a German browser', async () => {
    const user = await createUser(t);
    const b = browser();
    const page = await accountSignIn(t, b, user);
    const address = newAddress();
    const res = await b.request(`${t.issuer}/account/email`, {
      method: 'POST',
      headers: {
        'accept-language': 'de',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        csrf: csrfOf(page),
        email: address,
        current_password: user.password,
      }).toString(),
    });
    expect(res.status).toBe(200);
    const notice = await mailbox.next(user.email);
    expect(notice.subject).toBe('Eine Änderung Ihrer E-Mail-Adresse wurde angefordert');
    const cancel = notice.links.find((l) => l.includes('/account/email/cancel?token='))!;
    const shown = await browser().request(cancel, { headers: { 'accept-language': 'de' } });
    expect(await shown.text()).toContain('Änderung abbrechen');
  });

  test('a confirmed change ends the other sessions and tokens; the confirming browser stays', async () => {
    const user = await createUser(t);
    const other = await inAnApp(user);
    await sleep(5);
    const { b, csrf } = await atAccountPage(user);
    const address = newAddress();
    await b.postForm(`${t.issuer}/account/email`, {
      csrf,
      email: address,
      current_password: user.password,
    });
    const link = (await mailbox.next(address)).links.find((l) =>
      l.includes('/account/email/confirm'),
    )!;
    const confirmed = await b.postForm(`${t.issuer}/account/email/confirm`, {
      token: new URL(link).searchParams.get('token')!,
    });
    expect(confirmed.status).toBe(200);
    expect((await b.get(`${t.issuer}/account/sessions`)).status).toBe(200);
    expect(await refreshes(other.tokens.refresh_token!)).toBe(false);
    expect(await stillSignedIn(other.b)).toBe(false);
  });

  const doors: [string, (user: User, b: Browser) => Promise<Response>][] = [
    [
      'a password change',
      async (user, b) => {
        const page = await (await b.get(`${t.issuer}/account/password`)).text();
        return b.postForm(`${t.issuer}/account/password`, {
          csrf: csrfOf(page),
          current_password: user.password,
          new_password: 'a brand new passphrase',
        });
      },
    ],
    [
      'signing out everywhere else',
      async (_user, b) => {
        const page = await (await b.get(`${t.issuer}/account/sessions`)).text();
        const res = await b.postForm(`${t.issuer}/account/sessions/end-others`, {
          csrf: csrfOf(page),
        });
        expect(await res.clone().text()).toContain('You are signed out everywhere else');
        return res;
      },
    ],
    [
      'removing the authenticator app',
      async (user, b) => {
        const { secret } = await enrolTotp(t, b, user);
        // With a factor, the account page wants it: the next period's code (the first is used).
        const page = await accountSignIn(t, b, user, () => totpCode(secret, Date.now() + 30_000));
        return b.postForm(`${t.issuer}/account/totp/remove`, { csrf: csrfOf(page) });
      },
    ],
  ];

  test.each(doors)(
    '%s ends the other sessions, tokens and a pending e-mail change; this browser stays',
    async (_door, walkThrough) => {
      const user = await createUser(t);
      const other = await inAnApp(user);
      const { thief, token } = await thiefAsksForAddress(user);
      await sleep(5);
      const { b } = await atAccountPage(user);
      expect((await walkThrough(user, b)).status).toBe(200);

      expect((await b.get(`${t.issuer}/account/sessions`)).status).toBe(200);
      expect(await refreshes(other.tokens.refresh_token!)).toBe(false);
      expect(await stillSignedIn(other.b)).toBe(false);
      expect((await thief.get(`${t.issuer}/account/sessions`)).status).toBe(401);
      expect((await confirm(token)).status).toBe(400);
    },
  );
});

describe('sessions and apps', () => {
  test('lists the sessions and apps; ending another session signs that browser out and stops its tokens', async () => {
    const user = await createUser(t);
    const other = await inAnApp(user);
    const { b, csrf } = await atAccountPage(user);
    const page = await (await b.get(`${t.issuer}/account/sessions`)).text();
    expect(page.match(/class="session"/g)).toHaveLength(2);
    expect(page).toContain('This browser');
    expect(page).toContain('Public SPA');
    const listed = await t.admin('GET', `/admin/users/${user.id}/sessions`);
    const otherSession = (listed.body.items as { id: string; clients: string[] }[]).find(
      (s) => !s.clients.includes('portcullis-account'),
    )!;

    const ended = await b.postForm(`${t.issuer}/account/sessions/end`, {
      csrf,
      session: otherSession.id,
    });
    expect(ended.status).toBe(200);
    expect(await ended.text()).toContain('That session is ended');
    expect(await stillSignedIn(other.b)).toBe(false);
    expect(await refreshes(other.tokens.refresh_token!)).toBe(false);
    expect((await b.get(`${t.issuer}/account`)).status).toBe(200);
    const again = await b.postForm(`${t.issuer}/account/sessions/end`, {
      csrf,
      session: otherSession.id,
    });
    expect(again.status).toBe(404);
    expect(await auditKinds(user.id)).toContain('session_ended');
  });

  test("removing an app's access revokes its grant: the refresh token fails", async () => {
    const user = await createUser(t);
    const app = await inAnApp(user);
    const { b, csrf } = await atAccountPage(user);
    const page = await (await b.get(`${t.issuer}/account/sessions`)).text();
    const grant = /name="grant" value="([^"]+)"/.exec(page)![1]!;
    const someoneElse = await atAccountPage(await createUser(t));
    const foreign = await someoneElse.b.postForm(`${t.issuer}/account/apps/revoke`, {
      csrf: someoneElse.csrf,
      grant,
    });
    expect(foreign.status).toBe(404);
    expect(await refreshes(app.tokens.refresh_token!)).toBe(true);

    const res = await b.postForm(`${t.issuer}/account/apps/revoke`, { csrf, grant });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('The app no longer has access.');
    expect(await refreshes(app.tokens.refresh_token!)).toBe(false);
  });
});

describe('download my data', () => {
  test('a JSON attachment with profile, sessions, apps, audit and orders, without secrets', async () => {
    const user = await createUser(t);
    const app = await inAnApp(user);
    const { b } = await atAccountPage(user);
    await t.database.db('orders').insert({
      id: `ord-${user.id}`,
      user_id: user.id,
      customer: 'ACME Corp',
      status: 'pending',
      amount: 1999,
      currency: 'EUR',
    });
    const res = await b.get(`${t.issuer}/account/data`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const text = await res.text();
    const data = JSON.parse(text);
    expect(data).toMatchObject({
      profile: { id: user.id, email: user.email },
      roles: user.roles ?? expect.any(Array),
      orders: [{ id: `ord-${user.id}`, amount: 1999, customer: 'ACME Corp' }],
      payments: [],
    });
    expect(data.sessions).toHaveLength(2);
    expect(data.apps.map((a: { name: string }) => a.name)).toContain('Public SPA');
    const hash = await t.database.db('users').where({ id: user.id }).first('password_hash');
    const sessionIds = await t.database
      .db('oidc_payloads')
      .where({ type: 'Session' })
      .whereRaw(`payload->>'accountId' = ?`, [user.id])
      .pluck('id');
    for (const secret of [
      hash.password_hash,
      user.password,
      app.tokens.refresh_token!,
      ...sessionIds,
    ])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/password_hash|argon2/);

    await ageSignIn(t, user.id, 10 * 60);
    expect((await b.get(`${t.issuer}/account/data`)).status).toBe(401);
  });
});

describe('close the account', () => {
  test('tokens stop, sign-in fails, orders and payments pass to a tombstone, the audit stays', async () => {
    const user = await createUser(t);
    const app = await inAnApp(user);
    await t.database.db('orders').insert({
      id: `ord-close-${user.id}`,
      user_id: user.id,
      customer: 'ACME Corp',
      status: 'open',
      amount: 500,
      currency: 'EUR',
    });
    await t.database.db('payments').insert({
      id: `pay-close-${user.id}`,
      user_id: user.id,
      order_id: `ord-close-${user.id}`,
      amount: 500,
      currency: 'EUR',
      status: 'succeeded',
      provider_ref: 'psp-1',
      idempotency_id: crypto.randomUUID(),
      created_at: new Date(),
    });
    const { b, csrf } = await atAccountPage(user);
    const mismatch = await b.postForm(`${t.issuer}/account/close`, {
      csrf,
      confirm_email: 'someone@example.com',
    });
    expect(mismatch.status).toBe(400);

    const res = await b.postForm(`${t.issuer}/account/close`, {
      csrf,
      confirm_email: user.email.toUpperCase(),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Your account is closed.');

    expect(await refreshes(app.tokens.refresh_token!)).toBe(false);
    await expect(pkceSignIn(config, user, { scope: SCOPE })).rejects.toThrow(/form POST/);
    expect((await b.get(`${t.issuer}/account`)).status).toBe(401);
    expect((await t.admin('GET', `/admin/users/${user.id}/sessions`)).status).toBe(404);

    const order = await t.database
      .db('orders')
      .where({ id: `ord-close-${user.id}` })
      .first();
    const payment = await t.database
      .db('payments')
      .where({ id: `pay-close-${user.id}` })
      .first();
    expect(order.user_id).toMatch(/^closed:/);
    expect(payment.user_id).toBe(order.user_id);
    expect(await auditKinds(user.id)).toEqual(expect.arrayContaining(['account_closed']));
    const closed = await t.admin('GET', '/admin/audit?kind=account_closed&limit=100');
    expect(
      closed.body.items.find((e: { subject: string }) => e.subject === user.id).detail,
    ).toMatchObject({ tombstone: order.user_id, orders: 1, payments: 1 });
    expect((await mailbox.next(user.email)).subject).toBe('Your account was closed');
  });

  test('without a fresh sign-in the account stays', async () => {
    const user = await createUser(t);
    const { b, csrf } = await atAccountPage(user);
    await ageSignIn(t, user.id, 10 * 60);
    const res = await b.postForm(`${t.issuer}/account/close`, { csrf, confirm_email: user.email });
    expect(res.status).toBe(401);
    expect((await t.admin('GET', `/admin/users/${user.id}/sessions`)).status).toBe(200);
  });
});

describe('admin: sessions', () => {
  test('lists a user’s sessions and grants, ends one, then all', async () => {
    const user = await createUser(t);
    const first = await inAnApp(user);
    const second = await inAnApp(user);
    const listed = await t.admin('GET', `/admin/users/${user.id}/sessions`);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(2);
    expect(listed.body.grants).toHaveLength(2);
    expect(JSON.stringify(listed.body)).not.toMatch(/"payload"|"jti"/);

    const one = listed.body.items[0].id as string;
    expect((await t.admin('DELETE', `/admin/users/${user.id}/sessions/${one}`)).status).toBe(204);
    expect((await t.admin('DELETE', `/admin/users/${user.id}/sessions/${one}`)).status).toBe(404);
    expect((await t.admin('GET', `/admin/users/${user.id}/sessions`)).body.items).toHaveLength(1);
    expect(
      [await stillSignedIn(first.b), await stillSignedIn(second.b)].filter(Boolean),
    ).toHaveLength(1);

    await sleep(5);
    expect((await t.admin('DELETE', `/admin/users/${user.id}/sessions`)).status).toBe(204);
    expect(await refreshes(first.tokens.refresh_token!)).toBe(false);
    expect(await refreshes(second.tokens.refresh_token!)).toBe(false);
    expect(await stillSignedIn(second.b)).toBe(false);
    const after = await t.admin('GET', `/admin/users/${user.id}/sessions`);
    expect(after.body).toEqual({ items: [], grants: [] });
    expect(await auditKinds(user.id)).toEqual(
      expect.arrayContaining(['session_ended', 'sessions_ended']),
    );
    expect((await t.admin('GET', '/admin/users/nobody/sessions')).status).toBe(404);
  });
});
