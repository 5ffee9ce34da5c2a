import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import {
  ARGON2_OPTIONS,
  createAccountsRepo,
  hashPassword,
  passwordHashing,
  PasswordPolicyError,
  verifyPassword,
  type AccountsRepo,
} from '@portcullis/accounts';
import { isUniqueViolation } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';

let t: TestDatabase;
let accounts: AccountsRepo;
beforeAll(async () => {
  t = await createTestDatabase();
  accounts = createAccountsRepo(t.db);
});
afterAll(async () => {
  await t.close();
});

describe('accounts', () => {
  it('stores an argon2id hash with at least OWASP parameters, never the password', async () => {
    const user = await accounts.create({
      email: 'Alice@Example.com',
      password: 'correct horse battery',
      roles: ['admin'],
      name: 'Alice',
    });
    expect(user).toEqual(
      expect.objectContaining({ email: 'Alice@Example.com', roles: ['admin'], name: 'Alice' }),
    );
    expect(user).not.toHaveProperty('password_hash');
    const row = await t.db('users').where({ id: user.id }).first();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$/);
    const param = (name: string) =>
      Number(new RegExp(`[$,]${name}=(\\d+)`).exec(row.password_hash)?.[1]);
    const [m, tc, p] = [param('m'), param('t'), param('p')];
    expect(m).toBeGreaterThanOrEqual(ARGON2_OPTIONS.memoryCost);
    expect(tc).toBeGreaterThanOrEqual(2);
    expect(p).toBe(1);
    expect(row.password_hash).not.toContain('correct horse');
  });

  it('finds users by email case-insensitively and refuses a case-variant duplicate', async () => {
    expect((await accounts.findByEmail('alice@example.COM'))?.name).toBe('Alice');
    const err = await accounts
      .create({ email: 'ALICE@example.com', password: 'another password', roles: [] })
      .catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
  });

  it('a disabled account is not found for credentials, is for administration, and can be enabled', async () => {
    const user = await accounts.create({
      email: 'dis@example.com',
      password: 'long enough pw',
      roles: [],
    });
    const disabled = await accounts.setDisabled(user.id, new Date());
    expect(disabled?.disabledAt).toBeInstanceOf(Date);
    expect(await accounts.findById(user.id)).toBeUndefined();
    expect(await accounts.verifyCredentials('dis@example.com', 'long enough pw')).toBeUndefined();
    expect((await accounts.get(user.id))?.disabledAt).toBeInstanceOf(Date);
    await accounts.setDisabled(user.id, null);
    expect((await accounts.findById(user.id))?.disabledAt).toBeNull();
    expect((await accounts.verifyCredentials('dis@example.com', 'long enough pw'))?.id).toBe(
      user.id,
    );
    expect(await accounts.setDisabled('nobody', null)).toBeUndefined();
    await accounts.delete(user.id); // the listing test counts the others
  });

  it('sets a new password (policy-checked) and roles', async () => {
    const user = await accounts.create({
      email: 'pw@example.com',
      password: 'first password',
      roles: ['viewer'],
    });
    await expect(accounts.setPassword(user.id, 'short')).rejects.toBeInstanceOf(
      PasswordPolicyError,
    );
    await accounts.setPassword(user.id, 'second password');
    expect(await accounts.verifyCredentials('pw@example.com', 'first password')).toBeUndefined();
    expect((await accounts.verifyCredentials('pw@example.com', 'second password'))?.id).toBe(
      user.id,
    );
    expect((await accounts.setRoles(user.id, ['editor']))?.roles).toEqual(['editor']);
    await accounts.delete(user.id);
  });

  it('verifies credentials: right password yes, wrong password and unknown email no', async () => {
    expect(
      (await accounts.verifyCredentials('alice@example.com', 'correct horse battery'))?.email,
    ).toBe('Alice@Example.com');
    expect(await accounts.verifyCredentials('alice@example.com', 'wrong password')).toBeUndefined();
    expect(await accounts.verifyCredentials('nobody@example.com', 'whatever123')).toBeUndefined();
  });

  it('spends a real argon2 verify on an unknown email (no fast path that reveals accounts)', async () => {
    await accounts.verifyCredentials('warmup@example.com', 'whatever123');
    const time = async (email: string) => {
      const start = performance.now();
      await accounts.verifyCredentials(email, 'wrong password');
      return performance.now() - start;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time('alice@example.com'));
      unknown.push(await time(`ghost${i}@example.com`));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[2]!;
    // A skipped verify would be ~100x faster; within a factor of 2 means the same work.
    expect(median(unknown)).toBeGreaterThan(median(known) / 2);
  });

  it('refuses passwords outside 8..1024 characters with a field-named error', async () => {
    for (const password of ['short', 'x'.repeat(1025)]) {
      const err = await accounts
        .create({ email: `p${password.length}@example.com`, password, roles: [] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PasswordPolicyError);
      expect(err).toMatchObject({ code: 'invalid_password', field: 'password' });
    }
    expect(await accounts.findByEmail('p5@example.com')).toBeUndefined();
  });

  it('lists with a cursor and deletes', async () => {
    const bob = await accounts.create({
      email: 'bob@example.com',
      password: 'bob likes long walks',
      roles: [],
    });
    const all = await accounts.list({ limit: 10 });
    expect(all.map((u) => u.email).sort()).toEqual(['Alice@Example.com', 'bob@example.com']);
    const page = await accounts.list({ after: all[0]!.id, limit: 10 });
    expect(page).toHaveLength(1);
    expect(await accounts.count()).toBe(2);
    expect(await accounts.delete(bob.id)).toBe(true);
    expect(await accounts.delete(bob.id)).toBe(false);
  });
});

describe('password hashing under load', () => {
  it('runs one argon2id hash per core at a time; the rest wait their turn and all complete', async () => {
    const hash = await hashPassword('queue test password');
    const cores = availableParallelism();
    const verifies = Array.from({ length: cores * 3 }, (_, i) =>
      verifyPassword(hash, i % 2 === 0 ? 'queue test password' : 'wrong password'),
    );
    expect(passwordHashing()).toEqual({ running: cores, waiting: cores * 2, slots: cores });
    const results = await Promise.all(verifies);
    expect(results).toEqual(Array.from({ length: cores * 3 }, (_, i) => i % 2 === 0));
    expect(passwordHashing()).toMatchObject({ running: 0, waiting: 0 });
  }, 60_000);
});
