import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createAccountsRepo } from '@portcullis/accounts';
import { PASSWORD, login, sidOf } from './helpers/credentials.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

// docs/security.md "Doors": POST /login refuses an address not yet proven, after the password.

let strict: TestApi;
let lenient: TestApi;
beforeAll(async () => {
  strict = await startTestApi({});
  lenient = await startTestApi({ env: { SIGNUP_VERIFY: 'before-roles' } });
});
afterAll(async () => {
  await strict?.close();
  await lenient?.close();
});

const signedUp = (api: TestApi) =>
  createAccountsRepo(api.database.db).create({
    email: `signup-${randomUUID().slice(0, 8)}@example.test`,
    password: PASSWORD,
    roles: [],
    emailVerified: false,
  });

describe('POST /login of an unverified address', () => {
  test('SIGNUP_VERIFY=before-sign-in (default): 403 email_unverified, no session; a wrong password 401', async () => {
    const user = await signedUp(strict);
    const wrong = await login(strict, user.email, 'not the password at all');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_credentials');
    const refused = await login(strict, user.email);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('email_unverified');
    expect(sidOf(refused)).toBeUndefined();
    await createAccountsRepo(strict.database.db).markEmailVerified(user.id);
    expect((await login(strict, user.email)).status).toBe(200);
  });

  test('SIGNUP_VERIFY=before-roles: a session with no roles', async () => {
    const user = await signedUp(lenient);
    const reply = await login(lenient, user.email);
    expect(reply.status).toBe(200);
    expect(reply.body.user.roles).toEqual([]);
  });
});
