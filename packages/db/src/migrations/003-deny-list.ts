import type { Knex } from 'knex';

/**
 * Revoked access tokens (kind 'jti'), grants ('grant') and subjects ('subject', tokens
 * issued before `issued_before`), written by the auth server and the API and polled by
 * every API instance (packages/claims deny-list.ts). Rows are useless after `expires_at`
 * (the longest lifetime of a token they could match) and are purged.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('revocations', (t) => {
    t.bigIncrements('id').primary();
    t.text('kind').notNullable();
    t.text('value').notNullable();
    t.bigInteger('issued_before');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at'], 'revocations_expires_at_idx');
    t.index(['created_at'], 'revocations_created_at_idx');
  });
  await knex.raw(
    `ALTER TABLE revocations ADD CONSTRAINT revocations_kind_check CHECK (
      (kind IN ('jti', 'grant') AND issued_before IS NULL)
      OR (kind = 'subject' AND issued_before IS NOT NULL))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('revocations');
}
