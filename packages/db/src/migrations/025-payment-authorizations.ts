import type { Knex } from 'knex';

/**
 * RFC 9396 payment details (README "Payment authorization details (RFC 9396)"): one row per
 * detail used, keyed by the id the authorization server gave it at consent, so a detail pays
 * once whatever token carries it; `idempotency_id` lets a retry of the same payment through.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payment_authorizations', (t) => {
    t.text('authorization_id').primary();
    t.uuid('idempotency_id').notNullable();
    t.text('subject').notNullable();
    t.text('order_id').notNullable();
    t.timestamp('used_at', { useTz: true }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('payment_authorizations');
}
