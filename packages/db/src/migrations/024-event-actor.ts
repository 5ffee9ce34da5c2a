import type { Knex } from 'knex';

/**
 * `events.actor`: the RFC 8693 delegation chain of the write, the service calling for the user
 * first (README "Token exchange (RFC 8693)"); null when the user's own client wrote it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.jsonb('actor');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('actor');
  });
}
