import type { Knex } from 'knex';

/**
 * `rotation_started_at`: when a refresh token's latest rotation began (its latest
 * consume, by the database clock). A rotation is abandoned when its successor is not
 * saved within the rotation bound, and the save of a successor that arrives later is
 * refused (docs/security.md, "An abandoned rotation"): one instant decides both.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.timestamp('rotation_started_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropColumn('rotation_started_at');
  });
}
