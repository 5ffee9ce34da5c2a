import type { Knex } from 'knex';

/**
 * Two facts about a refresh token's rotation that the consume statement decides by
 * (docs/security.md, "Refresh-token rotation and the reuse interval"):
 * - `used_successor`: of the successors honest retries gave a token, the one used first.
 *   Consuming a successor claims this column on its parent's row, so of siblings used at
 *   once, in one statement or in concurrent transactions, exactly one wins (the parent's
 *   row lock orders them).
 * - `awaiting_successor`: set when a refresh token is consumed, cleared in the statement
 *   that saves its successor. A rotation whose successor was never saved (the database
 *   stopped answering in between: the client got a 503) left nobody holding a successor,
 *   so its token may be presented again instead of counting as reuse.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.text('used_successor');
    t.boolean('awaiting_successor');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropColumn('used_successor');
    t.dropColumn('awaiting_successor');
  });
}
