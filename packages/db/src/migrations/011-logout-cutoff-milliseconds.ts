import type { Knex } from 'knex';

/**
 * Logout everywhere compares in milliseconds (README "Trust model", deny list): a sign-in
 * finished in the same second as the logout, but after it, must work. `issued_at` is when
 * an artifact was issued (for a session: when it was signed in), with the precision the
 * clock has; a subject revocation's `issued_before` becomes Unix milliseconds (it was
 * seconds, rounded up).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.timestamp('issued_at', { useTz: true });
  });
  await knex.raw(
    `update revocations set issued_before = issued_before * 1000 where kind = 'subject'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `update revocations set issued_before = ceil(issued_before / 1000.0) where kind = 'subject'`,
  );
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropColumn('issued_at');
  });
}
