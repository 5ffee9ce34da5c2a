import type { Knex } from 'knex';

/**
 * Publish before sign: a new signing key is in the JWKS from `created_at` but signs only
 * from `activates_at`, so every verifier can learn it first. Existing keys activated
 * when they were created. `retired_at` may now lie in the future (the successor's
 * activation time).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signing_keys', (t) => {
    t.timestamp('activates_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex('signing_keys').update({ activates_at: knex.ref('created_at') });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signing_keys', (t) => {
    t.dropColumn('activates_at');
  });
}
