import type { Knex } from 'knex';

/**
 * Each refresh token row names the token it was rotated from. The reuse interval (docs/security.md
 * "Refresh-token rotation and the reuse interval") needs it: a just-rotated token may be retried only while none
 * of its successors has been used, and of two successors of one token only the first one
 * used stays valid. Both checks are lookups by this column inside the consume statement.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.text('rotated_from');
  });
  await knex.raw(
    `create index oidc_payloads_rotated_from_idx on oidc_payloads (rotated_from) where rotated_from is not null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists oidc_payloads_rotated_from_idx');
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropColumn('rotated_from');
  });
}
