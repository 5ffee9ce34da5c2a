import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  awaitsVerification,
  checkPassword,
  createAccountsRepo,
  PasswordPolicyError,
  type AccountsRepo,
} from '@portcullis/accounts';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';

let t: TestDatabase;
let accounts: AccountsRepo;
beforeAll(async () => {
  t = await createTestDatabase();
  accounts = createAccountsRepo(t.db);
});
afterAll(() => t.close());

const refusal = (password: string, email?: string) => {
  try {
    checkPassword(password, { email });
  } catch (error) {
    expect(error).toBeInstanceOf(PasswordPolicyError);
    return (error as PasswordPolicyError).message;
  }
  return undefined;
};

describe('password policy (NIST SP 800-63B §3.1.1.2)', () => {
  it('refuses common passwords and dictionary words, saying why', () => {
    expect(refusal('password1')).toMatch(/too easy to guess: this is a commonly used password/);
    expect(refusal('P@ssw0rd!')).toMatch(/similar to a commonly used password/);
    expect(refusal('trustno1trustno1')).toMatch(/repeated/);
    expect(refusal('qwertyuiop')).toMatch(/too easy to guess/);
    expect(refusal('sunflower')).toMatch(/too easy to guess/);
  });

  it('asks no composition: a phrase of lower-case words passes, short ones do not', () => {
    expect(refusal('correct horse battery staple')).toBeUndefined();
    expect(refusal('violet kettle on the stairs')).toBeUndefined();
    expect(refusal('aB3$xy')).toMatch(/at least 8 characters/);
  });

  it("refuses a password made of the user's own address", () => {
    expect(refusal('marguerite.oakley-1990', 'nobody@example.com')).toBeUndefined();
    expect(refusal('marguerite.oakley-1990', 'marguerite.oakley@example.com')).toMatch(
      /too easy to guess/,
    );
  });

  it('judges the first 64 characters of a long password and accepts the length limit', () => {
    expect(refusal(`${'k3J9xQ2mZp7Lw4Rt'.repeat(4)}${'a'.repeat(900)}`)).toBeUndefined();
    expect(refusal('x'.repeat(1025))).toMatch(/at most 1024/);
  });

  it('applies on create and on setPassword, with the stored address', async () => {
    await expect(
      accounts.create({ email: 'weak@example.com', password: 'password123', roles: [] }),
    ).rejects.toThrow(PasswordPolicyError);
    const user = await accounts.create({
      email: 'florence.night@example.com',
      password: 'lantern by the river gate',
      roles: [],
    });
    await expect(accounts.setPassword(user.id, 'florence.night!!')).rejects.toThrow(
      PasswordPolicyError,
    );
    expect(await accounts.setPassword(user.id, 'another lantern at dawn')).toBeDefined();
  });
});

describe('markEmailVerified', () => {
  it('proves the address once, giving roles in the same write', async () => {
    const user = await accounts.create({
      email: 'signup@example.com',
      password: 'lantern by the river gate',
      roles: [],
      emailVerified: false,
    });
    expect(user.emailVerifiedAt).toBeNull();
    expect(awaitsVerification(user, 'before-sign-in')).toBe(true);
    expect(awaitsVerification(user, 'before-roles')).toBe(false);
    const verified = await accounts.markEmailVerified(user.id, ['viewer']);
    expect(verified?.emailVerifiedAt).toBeInstanceOf(Date);
    expect(verified?.roles).toEqual(['viewer']);
    expect(awaitsVerification(verified!, 'before-sign-in')).toBe(false);
    // A second use changes nothing (roles an administrator changed since stay).
    await accounts.setRoles(user.id, ['editor']);
    expect(await accounts.markEmailVerified(user.id, ['viewer'])).toBeUndefined();
    expect((await accounts.get(user.id))?.roles).toEqual(['editor']);
  });
});
