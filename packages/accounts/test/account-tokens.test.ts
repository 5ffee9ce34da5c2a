import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createAccountTokens, createAccountsRepo, type AccountTokens } from '@portcullis/accounts';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';

let t: TestDatabase;
let clock = Date.now();
let tokens: AccountTokens;
let userId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  tokens = createAccountTokens(t.db, () => clock);
  const user = await createAccountsRepo(t.db).create({
    email: 'tokens@example.com',
    password: 'correct horse battery',
    roles: [],
  });
  userId = user.id;
});
afterAll(async () => {
  await t.close();
});

describe('account tokens', () => {
  it('works once, for its purpose only, and is stored as a digest', async () => {
    const { token } = await tokens.issue({ purpose: 'password_reset', userId, ttlSeconds: 900 });
    expect(await tokens.peek('email_verification', token)).toBeUndefined();
    expect(await tokens.peek('password_reset', token)).toEqual({ userId, email: null });
    const stored = await t.db('account_tokens').select('token_hash');
    expect(stored.map((r: { token_hash: string }) => r.token_hash)).not.toContain(token);
    const racing = await Promise.all([
      tokens.consume('password_reset', token),
      tokens.consume('password_reset', token),
    ]);
    expect(racing.filter(Boolean)).toHaveLength(1);
    expect(await tokens.consume('password_reset', token)).toBeUndefined();
  });

  it('expires, and a newer token of the same purpose replaces the older', async () => {
    const first = await tokens.issue({
      purpose: 'email_change',
      userId,
      email: 'new@example.com',
      ttlSeconds: 900,
    });
    const second = await tokens.issue({
      purpose: 'email_change',
      userId,
      email: 'newer@example.com',
      ttlSeconds: 900,
    });
    expect(await tokens.peek('email_change', first.token)).toBeUndefined();
    clock += 901_000;
    expect(await tokens.consume('email_change', second.token)).toBeUndefined();
  });

  it('refuses malformed tokens without a query error', async () => {
    expect(await tokens.consume('password_reset', 'x\u0000y')).toBeUndefined();
    expect(await tokens.peek('password_reset', '')).toBeUndefined();
  });
});
