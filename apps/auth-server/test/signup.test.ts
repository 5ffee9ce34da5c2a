import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  confirmAddress,
  createClient,
  decodeJwt,
  discover,
  type Mailbox,
  openSignInPage,
  pkceSignIn,
  publicSpa,
  REDIRECT_URI,
  signUp,
  startMailbox,
} from '@portcullis/testing';

// README "Sign-up": the pages, their mails through a real SMTP server, and every door.

const REDIS_URL = process.env['REDIS_URL'];
/** Each server its own limiter counts (REDIS_URL: its own key prefix). */
const ownLimits = (): Record<string, string> =>
  REDIS_URL
    ? { REDIS_URL, REDIS_KEY_PREFIX: `portcullis-test-${randomBytes(6).toString('hex')}:` }
    : {};

let mailbox: Mailbox;
let t: TestAuthServer;
beforeAll(async () => {
  mailbox = await startMailbox();
  t = await startTestAuthServer({ SMTP_URL: mailbox.url, SIGNUP: 'open', ...ownLimits() });
});
afterAll(async () => {
  await t?.close();
  await mailbox?.close();
});

let seq = 0;
const newPerson = () => ({
  email: `signup-${Date.now().toString(36)}-${seq++}@example.com`,
  password: `violet kettle ${randomBytes(3).toString('hex')}`,
});

/** An authorization request's sign-in page: its uid, CSRF token and cookie jar. */
async function openLogin(server: TestAuthServer, clientId: string) {
  const { b, url, uid, csrf } = await openSignInPage(server, clientId);
  return { b, interaction: url, uid, csrf };
}

const usersWith = async (server: TestAuthServer, email: string) =>
  (await server.database.db('users').whereRaw('lower(email) = lower(?)', [email])).length;

const text = (res: Response) => res.text();

describe('sign-up', () => {
  test('a new address and a taken one get the same answer; the owner is told, no second account', async () => {
    const person = newPerson();
    const first = await signUp(t.issuer, browser(), person);
    const firstHtml = await text(first);
    const link = (await mailbox.next(person.email)).links[0]!;
    expect(link).toMatch(new RegExp(`^${t.issuer}/signup/verify\\?token=`));

    const again = await signUp(t.issuer, browser(), { ...person, password: 'another kettle 42' });
    expect(again.status).toBe(first.status);
    expect(first.status).toBe(200);
    expect(await text(again)).toBe(firstHtml);
    expect(firstHtml).toContain('Check your mail');
    const warning = await mailbox.next(person.email);
    expect(warning.subject).toMatch(/Someone tried to sign up with your address/);
    expect(warning.text).toMatch(/No new account was made/);
    expect(await usersWith(t, person.email)).toBe(1);
  });

  test('a weak password is refused on the form, saying why; nothing is made or mailed', async () => {
    const person = { ...newPerson(), password: 'password123' };
    const res = await signUp(t.issuer, browser(), person);
    expect(res.status).toBe(422);
    expect(await text(res)).toContain('Choose another password: this is a commonly used password.');
    expect(await usersWith(t, person.email)).toBe(0);
    expect(mailbox.to(person.email)).toHaveLength(0);
  });

  test('the pages carry the strict CSP; a POST without the form token is refused', async () => {
    const page = await browser().get(`${t.issuer}/signup`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const res = await browser().postForm(`${t.issuer}/signup`, newPerson());
    expect(res.status).toBe(403);
  });

  test('in German for a German browser', async () => {
    const res = await fetch(`${t.issuer}/signup`, { headers: { 'accept-language': 'de-DE' } });
    expect(await res.text()).toContain('Konto erstellen');
  });

  test('unverified: the right password is told to verify first, a wrong one learns nothing', async () => {
    const spa = await publicSpa(t);
    const person = newPerson();
    await signUp(t.issuer, browser(), person);
    const link = (await mailbox.next(person.email)).links[0]!;

    const wrong = await openLogin(t, spa.client_id);
    const refused = await wrong.b.postForm(`${wrong.interaction}/login`, {
      csrf: wrong.csrf,
      email: person.email,
      password: 'not the password 1',
    });
    expect(refused.status).toBe(400);
    expect(await text(refused)).not.toMatch(/verify/i);

    const right = await openLogin(t, spa.client_id);
    const unverified = await right.b.postForm(`${right.interaction}/login`, {
      csrf: right.csrf,
      email: person.email,
      password: person.password,
    });
    expect(unverified.status).toBe(403);
    const unverifiedHtml = await text(unverified);
    expect(unverifiedHtml).toMatch(/Verify your e-mail address first/);
    expect(unverifiedHtml).toContain(`href="/signup/resend?interaction=${right.uid}"`);

    const confirmed = await confirmAddress(browser(), link);
    expect(confirmed.status).toBe(200);
    expect(await text(confirmed)).toContain('Address confirmed');
    const tokens = await pkceSignIn(await discover(t, spa.client_id), person, {
      resource: t.apiAudience,
      scope: 'openid api',
    });
    expect(decodeJwt(tokens.access_token).payload.roles).toEqual(['viewer']);
    const audit = await t.admin('GET', '/admin/audit?kind=email_verified');
    expect(audit.status).toBe(200);
  });

  test('a link works once; an expired one shows a clear page with a way to ask again', async () => {
    const person = newPerson();
    await signUp(t.issuer, browser(), person);
    const link = (await mailbox.next(person.email)).links[0]!;
    // A mail scanner's GET does not use the link.
    expect((await browser().get(link)).status).toBe(200);
    expect((await confirmAddress(browser(), link)).status).toBe(200);
    const reused = await confirmAddress(browser(), link);
    expect(reused.status).toBe(400);
    const reusedHtml = await text(reused);
    expect(reusedHtml).toContain('This link does not work');
    expect(reusedHtml).toContain('action="/signup/resend"');

    const late = newPerson();
    await signUp(t.issuer, browser(), late);
    const lateLink = (await mailbox.next(late.email)).links[0]!;
    const user = await t.database
      .db('users')
      .whereRaw('lower(email) = lower(?)', [late.email])
      .first();
    await t.database
      .db('account_tokens')
      .where({ user_id: user.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expect((await browser().get(lateLink)).status).toBe(400);

    // Asking again mails a new link that works.
    const b = browser();
    const form = await (await b.get(`${t.issuer}/signup/resend`)).text();
    const resent = await b.postForm(`${t.issuer}/signup/resend`, {
      csrf: /name="csrf" value="([^"]+)"/.exec(form)![1]!,
      email: late.email,
    });
    expect(resent.status).toBe(200);
    const fresh = (await mailbox.next(late.email)).links[0]!;
    expect((await confirmAddress(browser(), fresh)).status).toBe(200);
  });

  test('the administrator resends a link (audited), 409 once verified, 404 unknown; the listing shows the state', async () => {
    const person = newPerson();
    await signUp(t.issuer, browser(), person);
    await mailbox.next(person.email);
    const id = (
      await t.database.db('users').whereRaw('lower(email) = lower(?)', [person.email]).first()
    ).id as string;
    const listed = async () => {
      const items: { id: string; emailVerifiedAt: string | null }[] = [];
      let after = '';
      for (;;) {
        const page = await t.admin('GET', `/admin/users?limit=100${after && `&after=${after}`}`);
        items.push(...page.body.items);
        if (!page.body.nextCursor) return items.find((u) => u.id === id);
        after = page.body.nextCursor;
      }
    };
    expect((await listed())?.emailVerifiedAt).toBeNull();
    const sent = await t.admin('POST', `/admin/users/${id}/verification`);
    expect(sent.status).toBe(202);
    const link = (await mailbox.next(person.email)).links[0]!;
    const audit = await t.admin('GET', '/admin/audit?kind=email_verification_sent');
    expect(audit.body.items.some((e: { subject: string }) => e.subject === id)).toBe(true);
    expect((await confirmAddress(browser(), link)).status).toBe(200);
    expect((await listed())?.emailVerifiedAt).toEqual(expect.any(String));
    expect((await t.admin('POST', `/admin/users/${id}/verification`)).status).toBe(409);
    const unknown = await t.admin(
      'POST',
      `/admin/users/00000000-0000-4000-8000-000000000000/verification`,
    );
    expect(unknown.status).toBe(404);
  });

  test('a client with signup: false offers none at its sign-in', async () => {
    const closed = await createClient(t, {
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      signup: false,
    });
    const { b, uid } = await openLogin(t, closed.client_id);
    expect((await b.get(`${t.issuer}/signup?interaction=${uid}`)).status).toBe(404);
    const open = await openLogin(t, (await publicSpa(t)).client_id);
    const page = await open.b.get(`${t.issuer}/signup?interaction=${open.uid}`);
    expect(page.status).toBe(200);
    expect(await text(page)).toContain(`href="/interaction/${open.uid}"`);
  });
});

describe('sign-up limits and settings', () => {
  test('mail requests are limited per address and per IP (429 with Retry-After)', async () => {
    const limited = await t.startInstance({
      ACCOUNT_MAIL_ADDRESS_LIMIT: '2',
      ACCOUNT_MAIL_IP_LIMIT: '4',
      ...ownLimits(),
    });
    const person = newPerson();
    expect((await signUp(limited.issuer, browser(), person)).status).toBe(200);
    expect((await signUp(limited.issuer, browser(), person)).status).toBe(200);
    const third = await signUp(limited.issuer, browser(), person);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await text(third)).toMatch(/Too many requests/);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await signUp(limited.issuer, browser(), newPerson())).status);
    expect(statuses).toContain(429);
    await limited.close();
  });

  test('SIGNUP=off: no sign-up page and no account', async () => {
    const off = await t.startInstance({ SIGNUP: 'off' });
    expect((await browser().get(`${off.issuer}/signup`)).status).toBe(404);
    const person = newPerson();
    expect((await signUp(off.issuer, browser(), person)).status).toBe(404);
    expect(await usersWith(t, person.email)).toBe(0);
    await off.close();
  });

  test('SIGNUP_VERIFY=before-roles: signs in with no roles until the address is proven', async () => {
    const roles = await t.startInstance({
      SIGNUP_VERIFY: 'before-roles',
      SIGNUP_ROLES: 'editor',
    });
    const spa = await publicSpa(roles);
    const person = newPerson();
    await signUp(roles.issuer, browser(), person);
    const link = (await mailbox.next(person.email)).links[0]!;
    const config = await discover(roles, spa.client_id);
    const options = { resource: roles.apiAudience, scope: 'openid api' };
    const before = await pkceSignIn(config, person, { scope: 'openid email' });
    const sub = before.claims()!.sub;
    expect(await oidc.fetchUserInfo(config, before.access_token, sub)).toMatchObject({
      email_verified: false,
    });
    const api = await pkceSignIn(config, person, options);
    expect(decodeJwt(api.access_token).payload.roles).toEqual([]);
    expect((await confirmAddress(browser(), link)).status).toBe(200);
    const after = await pkceSignIn(config, person, options);
    expect(decodeJwt(after.access_token).payload.roles).toEqual(['editor']);
    await roles.close();
  });
});
