import type { Knex } from 'knex';

/**
 * `disabled_at`: an administrator disabled the account (docs/security.md "Disabled accounts and password resets"): it cannot sign
 * in and no credential acts for it until it is enabled again; null for an active account.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.timestamp('disabled_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('disabled_at');
  });
}
