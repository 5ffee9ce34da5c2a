import type { Knex } from 'knex';

/**
 * The successor of a refresh token that was used first. Retries within the reuse interval
 * (docs/security.md) give a token several successors; the consume statement claims this
 * column on the parent row before it consumes a successor, so of siblings used at once,
 * in one statement or in concurrent transactions, exactly one wins (the parent's row lock
 * orders them).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.text('used_successor');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropColumn('used_successor');
  });
}
