import type { Knex } from 'knex';

/**
 * The auth server reads a token's subject revocations (logout everywhere) in the same
 * statement as the token itself: an index on the subject makes that a lookup.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `create index revocations_subject_idx on revocations (value) where kind = 'subject'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists revocations_subject_idx');
}
