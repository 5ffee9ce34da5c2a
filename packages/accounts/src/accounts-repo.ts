import { randomUUID } from 'node:crypto';
import { coalesced, toCount, toJsonb, type Db, type UserRow } from '@portcullis/db';
import { hashPassword, verifyPassword } from './passwords.js';
import { checkPassword } from './password-policy.js';

/** A user as the rest of the system sees it: the password hash never leaves this module. */
export interface User {
  id: string;
  email: string;
  name: string | null;
  roles: string[];
  /** When an administrator disabled the account; null while it is active. */
  disabledAt: Date | null;
  /** When the address was proven (a mailed link); null while it is not. */
  emailVerifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** `secondFactor`: the password alone opens nothing (docs/security.md "Doors"). */
export interface PasswordSignIn extends User {
  secondFactor: boolean;
}

export interface NewUser {
  email: string;
  password: string;
  roles: string[];
  name?: string | null | undefined;
  /** false for a sign-up whose address is not proven yet; default true (an administrator's). */
  emailVerified?: boolean | undefined;
}

export interface AccountsRepo {
  create(input: NewUser): Promise<User>;
  /** Only an active user: a disabled account is not found, so every credential stops with it. */
  findById(id: string): Promise<User | undefined>;
  /** Any user, disabled or not (administration, directories). */
  get(id: string): Promise<User | undefined>;
  findByEmail(email: string): Promise<User | undefined>;
  /** Same time for an unknown email as for a wrong password, so timing reveals no accounts. */
  verifyCredentials(email: string, password: string): Promise<PasswordSignIn | undefined>;
  /** Replaces the user's roles; undefined for an unknown id. */
  setRoles(id: string, roles: string[]): Promise<User | undefined>;
  /** Disables (at `at`) or enables the account; undefined for an unknown id. */
  setDisabled(id: string, disabledAt: Date | null): Promise<User | undefined>;
  /** A new password, policy-checked (PasswordPolicyError); undefined for an unknown id. */
  setPassword(id: string, password: string): Promise<User | undefined>;
  /** A new, proven address (a confirmed change); a taken one fails as a unique violation. */
  setEmail(id: string, email: string): Promise<User | undefined>;
  /**
   * Records the address as proven, and with `roles` gives them in the same write (SIGNUP_VERIFY
   * before-roles); undefined for an unknown id or an address proven before (nothing changes).
   */
  markEmailVerified(id: string, roles?: string[]): Promise<User | undefined>;
  /** By id; `q`: only users whose email or name contains it (case-insensitive). */
  list(options: {
    after?: string | undefined;
    limit: number;
    q?: string | undefined;
  }): Promise<User[]>;
  delete(id: string): Promise<boolean>;
  count(): Promise<number>;
}

/** `text` matched literally in a LIKE pattern: its wildcards and the escape character escaped. */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    roles: row.roles,
    disabledAt: row.disabled_at ?? null,
    emailVerifiedAt: row.email_verified_at ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function createAccountsRepo(db: Db): AccountsRepo {
  // Computed once, lazily: verifying against it costs what a real verify costs.
  let dummyHash: Promise<string> | undefined;
  const getDummyHash = () => (dummyHash ??= hashPassword('portcullis-dummy-password'));

  // Reads by id (every token request reads its user) coalesced across concurrent requests.
  const usersById = coalesced(async (ids: readonly string[]) => {
    const rows = await db<UserRow>('users').whereIn('id', [...new Set(ids)]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id));
  });
  const byEmail = (email: string) =>
    db<UserRow>('users').whereRaw('lower(email) = lower(?)', [email]).first();
  // The factor kinds of the auth server's FactorRegistry, as rows (its test holds them equal).
  const withSecondFactor = (email: string) =>
    db<UserRow & { second_factor: boolean }>('users')
      .select('users.*')
      .select(
        db.raw(
          `exists (select 1 from mfa_totp f where f.user_id = users.id and f.confirmed_at is not null)
           or exists (select 1 from passkeys p where p.user_id = users.id) as second_factor`,
        ),
      )
      .whereRaw('lower(email) = lower(?)', [email])
      .first();

  async function update(id: string, changes: Record<string, unknown>) {
    const [row] = await db('users')
      .where({ id })
      .update({ ...changes, updated_at: db.fn.now() })
      .returning('*');
    return row ? toUser(row as UserRow) : undefined;
  }

  return {
    async create(input) {
      checkPassword(input.password, { email: input.email });
      const row = {
        id: randomUUID(),
        email: input.email.trim(),
        name: input.name ?? null,
        roles: toJsonb(input.roles),
        password_hash: await hashPassword(input.password),
        email_verified_at: input.emailVerified === false ? null : db.fn.now(),
      };
      const [inserted] = await db('users').insert(row).returning('*');
      return toUser(inserted as UserRow);
    },

    async findById(id) {
      const row = await usersById(id);
      return row && !row.disabled_at ? toUser(row) : undefined;
    },

    async get(id) {
      const row = await usersById(id);
      return row && toUser(row);
    },

    async findByEmail(email) {
      const row = await byEmail(email);
      return row && toUser(row);
    },

    async verifyCredentials(email, password) {
      if (password.length > 4 * 1024) return undefined;
      const row = await withSecondFactor(email);
      if (!row) {
        await verifyPassword(await getDummyHash(), password);
        return undefined;
      }
      if (!(await verifyPassword(row.password_hash, password))) return undefined;
      if (row.disabled_at) return undefined;
      return { ...toUser(row), secondFactor: row.second_factor === true };
    },

    async list({ after, limit, q }) {
      const query = db<UserRow>('users').orderBy('id').limit(limit);
      if (after) query.where('id', '>', after);
      if (q) {
        const pattern = `%${escapeLike(q.toLowerCase())}%`;
        query.where((w) =>
          w
            .whereRaw(`lower(email) like ? escape '\\'`, [pattern])
            .orWhereRaw(`lower(name) like ? escape '\\'`, [pattern]),
        );
      }
      return (await query).map(toUser);
    },

    setRoles: (id, roles) => update(id, { roles: toJsonb(roles) }),

    setDisabled: (id, disabledAt) => update(id, { disabled_at: disabledAt }),

    async setPassword(id, password) {
      const row = await db<UserRow>('users').where({ id }).first('email');
      if (!row) return undefined;
      checkPassword(password, { email: row.email });
      return update(id, { password_hash: await hashPassword(password) });
    },

    setEmail: (id, email) => update(id, { email: email.trim(), email_verified_at: db.fn.now() }),
    async markEmailVerified(id, roles) {
      const [row] = await db('users')
        .where({ id })
        .whereNull('email_verified_at')
        .update({
          email_verified_at: db.fn.now(),
          updated_at: db.fn.now(),
          ...(roles ? { roles: toJsonb(roles) } : {}),
        })
        .returning('*');
      return row ? toUser(row as UserRow) : undefined;
    },

    async delete(id) {
      // returning() rather than the affected-row count: knex-pglite does not report one.
      return (await db('users').where({ id }).del().returning('id')).length > 0;
    },

    async count() {
      const row = await db('users').count<{ count: unknown }[]>({ count: '*' }).first();
      return toCount(row?.count ?? 0);
    },
  };
}
