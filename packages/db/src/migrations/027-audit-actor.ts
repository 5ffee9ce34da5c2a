import type { Knex } from 'knex';

/**
 * `audit_events.actor`: who made an admin API change (a user id, or `admin-token`); null for
 * entries no administrator wrote. The admin API filters by actor and by subject, newest first.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audit_events', (t) => {
    t.text('actor');
    t.index(['actor', 'id'], 'audit_events_actor_idx');
    t.index(['subject', 'id'], 'audit_events_subject_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audit_events', (t) => {
    t.dropIndex(['subject', 'id'], 'audit_events_subject_idx');
    t.dropIndex(['actor', 'id'], 'audit_events_actor_idx');
    t.dropColumn('actor');
  });
}
