import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createAccountsRepo } from '@portcullis/accounts';
import { denySubjectElsewhere, until } from '@portcullis/testing';
import { makeUser } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';
import { login, ORIGIN, PASSWORD, setCookieOf, sidOf, withSession } from './helpers/credentials.js';

let api: TestApi;
// The API's clock runs `offset` ms ahead of the wall clock (idle/absolute expiry tests).
let offset = 0;

beforeAll(async () => {
  api = await startTestApi({
    env: { SESSION_IDLE_TIMEOUT: '1800', SESSION_ABSOLUTE_TIMEOUT: '3600' },
    deps: { now: () => Date.now() + offset },
  });
});
afterAll(() => api.close());

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

async function signedIn(roles = ['viewer']) {
  const user = await makeUser(api.database.db, roles);
  const reply = await login(api, user.email);
  expect(reply.status).toBe(200);
  return { user, sid: sidOf(reply)! };
}

const me = (sid: string, userId: string) =>
  api.request('GET', `/users/${userId}`, { headers: { cookie: `sid=${sid}` } });

describe('POST /login', () => {
  test('sets sid HttpOnly, Secure, SameSite=Strict, Path=/ and returns the user, no token', async () => {
    const user = await makeUser(api.database.db, ['editor']);
    const reply = await login(api, user.email.toUpperCase());
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ user: { id: user.id, email: user.email, roles: ['editor'] } });
    const cookie = setCookieOf(reply)!;
    const attributes = cookie.split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(
      expect.arrayContaining(['httponly', 'secure', 'samesite=strict', 'path=/']),
    );
    expect(sidOf(reply)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(reply.text).not.toContain(sidOf(reply));
  });

  test('accepts a url-encoded form', async () => {
    const user = await makeUser(api.database.db);
    const reply = await api.request('POST', '/login', {
      raw: new URLSearchParams({ email: user.email, password: PASSWORD }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status).toBe(200);
    expect(sidOf(reply)).toBeDefined();
  });

  test('a wrong password or unknown email is 401 invalid_credentials without a cookie', async () => {
    const user = await makeUser(api.database.db);
    for (const [email, password] of [
      [user.email, 'wrong password entirely'],
      ['nobody@example.test', PASSWORD],
    ]) {
      const reply = await login(api, email!, password);
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ error: 'invalid_credentials', message: expect.any(String) });
      expect(setCookieOf(reply)).toBeUndefined();
    }
  });

  test('a disabled account (admin user:disable) cannot log in, and its open session stops acting', async () => {
    const { user, sid } = await signedIn();
    expect((await me(sid, user.id)).status).toBe(200);
    // What the admin API's disable writes (packages/accounts, users.disabled_at).
    await createAccountsRepo(api.database.db).setDisabled(user.id, new Date());
    const reply = await login(api, user.email);
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ error: 'invalid_credentials', message: expect.any(String) });
    expect(setCookieOf(reply)).toBeUndefined();
    expect((await me(sid, user.id)).status).toBe(401);
  });

  test('a subject revocation written elsewhere (admin reset or disable) ends the sid sessions begun before it', async () => {
    const { user, sid } = await signedIn();
    expect((await me(sid, user.id)).status).toBe(200);
    // What the auth server's admin API writes: a row in the shared revocations table only.
    await denySubjectElsewhere(api.database.db, user.id);
    const status = await until(
      async () => (await me(sid, user.id)).status,
      (s) => s === 401,
      20_000,
    );
    expect(status).toBe(401);
    // A session begun after it stays.
    const again = sidOf(await login(api, user.email))!;
    await new Promise((r) => setTimeout(r, 600)); // two more polls
    expect((await me(again, user.id)).status).toBe(200);
  });

  test('missing fields are 422 naming them', async () => {
    const reply = await api.request('POST', '/login', { body: { email: 'a@b.test' } });
    expect(reply.status).toBe(422);
    expect(Object.keys(reply.body.fields)).toEqual(['password']);
  });

  test('only the SHA-256 of the session id is stored', async () => {
    const { user, sid } = await signedIn();
    const rows = await api.database.db('sessions').where('user_id', user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0].id_hash).toBe(sha256(sid));
    expect(JSON.stringify(rows)).not.toContain(sid);
  });

  test('no fixation: a pre-set sid is ignored and replaced; every login gets a new id', async () => {
    const user = await makeUser(api.database.db);
    const planted = 'A'.repeat(43);
    const first = await login(api, user.email, PASSWORD, {
      cookie: `sid=${planted}`,
      origin: ORIGIN,
    });
    const firstSid = sidOf(first)!;
    expect(firstSid).not.toBe(planted);
    expect((await me(planted, user.id)).status).toBe(401);

    // Logging in again from a browser holding a live session ends the old one.
    const second = await login(api, user.email, PASSWORD, withSession(firstSid));
    const secondSid = sidOf(second)!;
    expect(secondSid).not.toBe(firstSid);
    expect((await me(firstSid, user.id)).status).toBe(401);
    expect((await me(secondSid, user.id)).status).toBe(200);
  });
});

describe('session authentication', () => {
  test('the cookie authenticates as the user, with roles read from the user', async () => {
    const { user, sid } = await signedIn(['viewer']);
    expect((await me(sid, user.id)).status).toBe(200);
    // viewer lacks users:delete
    const denied = await api.request('DELETE', `/users/${user.id}`, { headers: withSession(sid) });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    await api.database
      .db('users')
      .where('id', user.id)
      .update({ roles: JSON.stringify(['admin']) });
    const other = await makeUser(api.database.db);
    expect(
      (await api.request('DELETE', `/users/${other.id}`, { headers: withSession(sid) })).status,
    ).toBe(204);
  });

  test('malformed, unknown and missing cookies are refused', async () => {
    const user = await makeUser(api.database.db);
    for (const [sid, message] of [
      ['short', 'token malformed'],
      ['B'.repeat(43), 'token expired'],
      ['x'.repeat(44), 'token malformed'],
    ]) {
      const reply = await me(sid!, user.id);
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ error: 'invalid_token', message });
    }
  });

  test('precedence: an Authorization header together with a sid cookie is 400 ambiguous_credentials', async () => {
    const { user, sid } = await signedIn();
    const token = await api.tokenFor(user);
    const reply = await api.request('GET', `/users/${user.id}`, {
      token,
      headers: { cookie: `sid=${sid}` },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('ambiguous_credentials');
    expect((await api.request('GET', `/users/${user.id}`, { token })).status).toBe(200);
  });
});

describe('origin check on cookie-authenticated writes', () => {
  test('a foreign Origin is 403 forbidden_origin', async () => {
    const { sid } = await signedIn();
    const reply = await api.request('POST', '/logout', {
      headers: withSession(sid, { origin: 'https://evil.test' }),
    });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({ error: 'forbidden_origin' });
  });

  test('no Origin needs Sec-Fetch-Site: same-origin', async () => {
    const { user, sid } = await signedIn();
    const cookie = `sid=${sid}`;
    for (const site of [undefined, 'cross-site', 'same-site', 'none']) {
      const headers: Record<string, string> = {
        cookie,
        ...(site ? { 'sec-fetch-site': site } : {}),
      };
      const reply = await api.request('POST', '/logout', { headers });
      expect([site, reply.status, reply.body]).toEqual([site, 403, { error: 'forbidden_origin' }]);
    }
    expect((await me(sid, user.id)).status).toBe(200);
    const ok = await api.request('POST', '/logout', {
      headers: { cookie, 'sec-fetch-site': 'same-origin' },
    });
    expect(ok.status).toBe(204);
  });

  test('a configured CORS origin is allowed; safe methods and bearer requests are not checked', async () => {
    const cors = await startTestApi({ env: { CORS_ORIGINS: 'https://app.example.test' } });
    try {
      const user = await makeUser(cors.database.db);
      const sid = sidOf(await login(cors, user.email))!;
      const get = await cors.request('GET', `/users/${user.id}`, {
        headers: { cookie: `sid=${sid}`, origin: 'https://evil.test' },
      });
      expect(get.status).toBe(200);
      const token = await cors.tokenFor(user);
      const bearer = await cors.request('POST', '/logout/all', {
        token,
        headers: { origin: 'https://evil.test' },
      });
      expect(bearer.status).toBe(204);
      const fresh = sidOf(await login(cors, user.email))!;
      const logout = await cors.request('POST', '/logout', {
        headers: { cookie: `sid=${fresh}`, origin: 'https://app.example.test' },
      });
      expect(logout.status).toBe(204);
    } finally {
      await cors.close();
    }
  });

  test('login from a foreign page is refused (login CSRF); curl without Origin may log in', async () => {
    const user = await makeUser(api.database.db);
    const foreign = await login(api, user.email, PASSWORD, { origin: 'https://evil.test' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden_origin' });
    const crossSite = await login(api, user.email, PASSWORD, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect((await login(api, user.email)).status).toBe(200);
  });
});

describe('POST /logout', () => {
  test('ends this session at once and clears the cookie', async () => {
    const { user, sid } = await signedIn();
    const other = sidOf(await login(api, user.email))!;
    const reply = await api.request('POST', '/logout', { headers: withSession(sid) });
    expect(reply.status).toBe(204);
    expect(setCookieOf(reply)).toMatch(/^sid=; .*Max-Age=0/);
    expect((await me(sid, user.id)).status).toBe(401);
    // Only this session: the user's other browser stays signed in.
    expect((await me(other, user.id)).status).toBe(200);
  });

  test('is idempotent without a (valid) session', async () => {
    expect((await api.request('POST', '/logout', {})).status).toBe(204);
    expect(
      (await api.request('POST', '/logout', { headers: withSession('C'.repeat(43)) })).status,
    ).toBe(204);
  });
});

describe('POST /logout/all', () => {
  test('ends every session and every access token of the user, at once', async () => {
    const { user, sid } = await signedIn(['editor']);
    const otherSession = sidOf(await login(api, user.email))!;
    const token = await api.tokenFor(user);
    expect((await api.request('GET', `/users/${user.id}`, { token })).status).toBe(200);
    const bystander = await signedIn();
    const bystanderToken = await api.tokenFor(bystander.user);

    const reply = await api.request('POST', '/logout/all', { headers: withSession(sid) });
    expect(reply.status).toBe(204);
    expect(setCookieOf(reply)).toMatch(/Max-Age=0/);

    expect((await me(sid, user.id)).status).toBe(401);
    expect((await me(otherSession, user.id)).status).toBe(401);
    const refused = await api.request('GET', `/users/${user.id}`, { token });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
    // Nobody else is affected.
    expect((await me(bystander.sid, bystander.user.id)).status).toBe(200);
    expect((await api.request('GET', `/users/${user.id}`, { token: bystanderToken })).status).toBe(
      200,
    );
    // Signing in again afterwards works.
    const again = sidOf(await login(api, user.email))!;
    expect((await me(again, user.id)).status).toBe(200);
  });

  test('writes a subject revocation the auth server can honour for refresh tokens', async () => {
    const { user } = await signedIn();
    const token = await api.tokenFor(user);
    const before = Date.now();
    expect((await api.request('POST', '/logout/all', { token })).status).toBe(204);
    const row = await api.database
      .db('revocations')
      .where({ kind: 'subject', value: user.id })
      .first();
    // The instant of the logout, in milliseconds: not rounded up to the next second.
    expect(Number(row.issued_before)).toBeGreaterThanOrEqual(before);
    expect(Number(row.issued_before)).toBeLessThanOrEqual(Date.now());
    // Kept for as long as a refresh-token grant may live (LOGOUT_ALL_REVOCATION_TTL, 30 days).
    expect(new Date(row.expires_at).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
  });

  test('needs a signed-in user: 401 anonymous', async () => {
    const reply = await api.request('POST', '/logout/all', {});
    expect(reply.status).toBe(401);
  });
});

describe('timeouts (injected clock)', () => {
  afterAll(() => {
    offset = 0;
  });

  test('idle: a session unused for longer than SESSION_IDLE_TIMEOUT is refused; use keeps it alive', async () => {
    const { user, sid } = await signedIn();
    const idle = await signedIn();
    offset = 20 * 60_000;
    expect((await me(sid, user.id)).status).toBe(200);
    offset = 40 * 60_000; // 40 min after login, 20 min after last use
    expect((await me(sid, user.id)).status).toBe(200);
    expect((await me(idle.sid, idle.user.id)).status).toBe(401);
    offset = 71 * 60_000; // 31 min idle
    expect((await me(sid, user.id)).status).toBe(401);
    offset = 0;
  });

  test('last_seen_at is written at most once a minute', async () => {
    const { user, sid } = await signedIn();
    const seen = async () =>
      (
        await api.database.db('sessions').where('id_hash', sha256(sid)).first()
      ).last_seen_at.getTime();
    const t0 = await seen();
    offset = 30_000;
    await me(sid, user.id);
    expect(await seen()).toBe(t0);
    offset = 61_000;
    await me(sid, user.id);
    expect(await seen()).toBeGreaterThan(t0 + 60_000);
    offset = 0;
  });

  test('a login deletes the user’s ended sessions, at most once a minute per user', async () => {
    const { user, sid: first } = await signedIn();
    const rows = async () =>
      (await api.database.db('sessions').where('user_id', user.id).select('id_hash')).map(
        (r: { id_hash: string }) => r.id_hash,
      );
    const logout = (sid: string) =>
      api.request('POST', '/logout', { headers: withSession(sid) }).then((r) => r.status);
    expect(await logout(first)).toBe(204);
    offset = 30_000;
    const second = sidOf(await login(api, user.email))!;
    // Purged at the first login 30 s ago: the ended session is still stored.
    expect(await rows()).toEqual(expect.arrayContaining([sha256(first), sha256(second)]));
    expect(await logout(second)).toBe(204);
    offset = 61_000;
    const third = sidOf(await login(api, user.email))!;
    expect(await rows()).toEqual([sha256(third)]);
    offset = 0;
  });

  test('absolute: activity does not extend a session past SESSION_ABSOLUTE_TIMEOUT', async () => {
    const { user, sid } = await signedIn();
    for (const minutes of [25, 50]) {
      offset = minutes * 60_000;
      expect((await me(sid, user.id)).status).toBe(200);
    }
    offset = 61 * 60_000;
    expect((await me(sid, user.id)).status).toBe(401);
    offset = 0;
  });
});
