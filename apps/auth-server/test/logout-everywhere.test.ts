import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createSharedDenyList, type SharedDenyList } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  REDIRECT_URI,
  rethrow,
} from '@portcullis/testing';

let t: TestAuthServer;
let database: TestDatabase;
// The auth server's own deny list, handed in so a test can wait for its next poll.
let authServer: SharedDenyList;
// Writes as another API instance would: its own bus, so the auth server learns of the
// revocation only through the `revocations` table (its 250 ms poll).
let api: SharedDenyList;
beforeAll(async () => {
  database = await createTestDatabase();
  authServer = createSharedDenyList({ db: database.db, onError: rethrow });
  await authServer.start();
  t = await startTestAuthServer({}, { db: database.db, denyList: authServer });
  api = createSharedDenyList({ db: database.db, onError: rethrow, bus: new EventEmitter() });
});
afterAll(async () => {
  await api?.close();
  await t?.close();
  await authServer?.close();
  await database?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowSec = () => Math.floor(Date.now() / 1000);
let sameSecond = 0;

/** What the API's POST /logout/all writes (apps/api routes/sessions.ts): its instant, in ms. */
async function logoutEverywhere(userId: string): Promise<number> {
  const before = Date.now() / 1000;
  await api.denySubject(userId, before, nowSec() + 30 * 86_400);
  return before;
}

describe('logout everywhere reaches the authorization server', () => {
  test('refresh tokens, grants and sessions issued before it are refused; a new login works', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);

    // Signed in through a browser whose session cookie we keep.
    const b = browser();
    const verifier = oidc.randomPKCECodeVerifier();
    const authorize = async (extra: Record<string, string> = {}) =>
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid offline_access api',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        ...extra,
      });
    const callback = await browserLogin((await authorize()).href, user, { b });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
    });
    const grantId = decodeJwt(tokens.access_token).payload.grant_id as string;
    const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(rotated.refresh_token).toBeDefined();

    const before = await logoutEverywhere(user.id);
    await authServer.sync({ fresh: true }); // its next poll

    await expect(oidc.refreshTokenGrant(config, rotated.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // The grant itself is gone (and announced: its access tokens reach the API deny list).
    const left = await t.database.db('oidc_payloads').where({ grant_id: grantId }).select('id');
    expect(left).toEqual([]);
    await t.server.settle();
    await api.sync();
    expect(api.isDenied({ grant_id: grantId })).toBe(true);

    // The browser session from before the logout no longer signs in silently.
    const silent = await b.get((await authorize({ prompt: 'none' })).href);
    let location = silent.headers.get('location') ?? '';
    for (let hop = 0; hop < 5 && !location.startsWith(REDIRECT_URI); hop++) {
      location = (await b.get(new URL(location, t.issuer).href)).headers.get('location') ?? '';
    }
    expect(new URL(location).searchParams.get('error')).toBe('login_required');

    // Signing in again (after the logout instant) works, refresh included.
    expect(Date.now() / 1000).toBeGreaterThan(before);
    const fresh = await pkceSignIn(config, user, { scope: 'openid offline_access api' });
    expect(decodeJwt(fresh.access_token).payload.grant_id).not.toBe(grantId);
    await expect(oidc.refreshTokenGrant(config, fresh.refresh_token!)).resolves.toMatchObject({
      access_token: expect.any(String),
    });
  });

  test('an authorization code issued before the logout is refused', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid api',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await browserLogin(url.href, user);
    await logoutEverywhere(user.id);
    await authServer.sync({ fresh: true });
    await expect(
      oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  test('the very next refresh after a logout everywhere written elsewhere is refused (no wait)', async () => {
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const users = await Promise.all([1, 2, 3, 4].map(() => createUser(t)));
    const sessions = await Promise.all(
      users.map((user) => pkceSignIn(config, user, { scope: 'openid offline_access api' })),
    );
    // Logged out one after the other, each refreshed at once, all in flight together with
    // refreshes of users who stay signed in: only the logged-out ones are refused.
    const loggedOut = users.slice(0, 2);
    const outcomes = await Promise.all(
      sessions.map(async (tokens, i) => {
        if (i < loggedOut.length) await logoutEverywhere(users[i]!.id);
        return oidc.refreshTokenGrant(config, tokens.refresh_token!).then(
          () => 'refreshed',
          (error: { error?: string }) => error.error,
        );
      }),
    );
    expect(outcomes).toEqual(['invalid_grant', 'invalid_grant', 'refreshed', 'refreshed']);
  });

  test('a sign-in finished 50 ms after a logout everywhere, in the same second, works', async () => {
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const scope = 'openid offline_access api';
    for (let trial = 0; trial < 3; trial++) {
      const user = await createUser(t);
      const old = await pkceSignIn(config, user, { scope });
      // Just after a second starts, so the new sign-in ends in the logout's second.
      while (Date.now() % 1000 > 100) await sleep(10);
      const second = nowSec();
      await logoutEverywhere(user.id);
      await sleep(50);
      const fresh = await pkceSignIn(config, user, { scope });
      const refreshed = await oidc.refreshTokenGrant(config, fresh.refresh_token!);
      if (nowSec() === second) sameSecond++;

      // The API (deny list) takes the new tokens and refuses the old one.
      await api.sync();
      expect(api.isDenied(decodeJwt(fresh.access_token).payload)).toBe(false);
      expect(api.isDenied(decodeJwt(refreshed.access_token).payload)).toBe(false);
      expect(api.isDenied(decodeJwt(old.access_token).payload)).toBe(true);
      await expect(oidc.refreshTokenGrant(config, old.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    }
    // The point of the test: most trials (on a loaded machine, not always all) ended in
    // the second of the logout.
    expect(sameSecond).toBeGreaterThan(0);
  });
});
