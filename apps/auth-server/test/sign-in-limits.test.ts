import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  createClient,
  createUser,
  fetchFrom,
  openSignInPage,
  REDIRECT_URI,
} from '@portcullis/testing';

// The sign-in page applies the LOGIN_* variables (the API's POST /login limits). The server
// trusts no X-Forwarded-For, so each address is a real loopback source (127.0.0.x).
const REDIS_URL = process.env['REDIS_URL'];
const ENV = {
  LOGIN_IP_LIMIT: '3',
  LOGIN_ACCOUNT_LIMIT: '2',
  LOGIN_LIMIT_WINDOW: '30',
  ...(REDIS_URL
    ? { REDIS_URL, REDIS_KEY_PREFIX: `portcullis-test-${randomBytes(6).toString('hex')}:` }
    : {}),
};

let t: TestAuthServer;
let clientId: string;
beforeAll(async () => {
  t = await startTestAuthServer(ENV);
  clientId = (
    await createClient(t, { token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT_URI] })
  ).client_id;
});
afterAll(async () => {
  await t?.close();
});

let lastHost = 10;
/** A browser on a machine of its own (127.0.0.11, .12, …). */
const machine = () => browser(undefined, { fetch: fetchFrom(`127.0.0.${++lastHost}`) });

/** Opens the sign-in page from `b` and posts one email and password; the answer. */
async function signIn(b: ReturnType<typeof browser>, email: string, password: string) {
  const { url, csrf } = await openSignInPage(t, clientId, { b });
  return b.postForm(`${url}/login`, { csrf, email, password });
}

function expectLimited(res: Response) {
  expect(res.status).toBe(429);
  const retryAfter = res.headers.get('retry-after')!;
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
  // LOGIN_LIMIT_WINDOW, not a limit of the auth server's own.
  expect(Number(retryAfter)).toBeLessThanOrEqual(30);
}

describe(`the sign-in page honours LOGIN_* (${REDIS_URL ? 'redis' : 'memory'} store)`, () => {
  test('LOGIN_ACCOUNT_LIMIT failures lock the account from every address until the window ends; others sign in', async () => {
    const user = await createUser(t);
    const attacker = machine();
    for (let i = 0; i < 2; i++) {
      expect((await signIn(attacker, user.email, `wrong-${i}`)).status).toBe(400);
    }
    expectLimited(await signIn(machine(), user.email.toUpperCase(), user.password));
    const other = await createUser(t);
    expect((await signIn(attacker, other.email, other.password)).status).toBe(303);
  });

  test('LOGIN_IP_LIMIT failures across accounts refuse that address only', async () => {
    const attacker = machine();
    for (let i = 0; i < 3; i++) {
      const user = await createUser(t);
      expect((await signIn(attacker, user.email, 'wrong')).status).toBe(400);
    }
    const user = await createUser(t);
    expectLimited(await signIn(attacker, user.email, user.password));
    expect((await signIn(machine(), user.email, user.password)).status).toBe(303);
  });

  test('a success clears the account’s failures and does not count against the address', async () => {
    const user = await createUser(t);
    const b = machine();
    // Without the reset the second failure would be the account's third attempt (429); without
    // the reward the second success would be the address's fourth.
    for (let round = 0; round < 2; round++) {
      expect((await signIn(b, user.email, 'wrong')).status).toBe(400);
      expect((await signIn(b, user.email, user.password)).status).toBe(303);
    }
  });
});
