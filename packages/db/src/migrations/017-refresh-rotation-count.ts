import type { Knex } from 'knex';

/**
 * `rotations`: how many times a refresh token was consumed to rotate it, each giving one
 * successor. Retries within the reuse interval stop at a cap (MAX_SIBLINGS in the
 * auth server's adapter; docs/security.md, "Siblings").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.integer('rotations');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropColumn('rotations');
  });
}
