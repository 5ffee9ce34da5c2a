import type { Knex } from 'knex';

/**
 * Authorization-server tables: OAuth clients, every oidc-provider artifact (codes,
 * tokens, grants, sessions, interactions, device codes) in one payload table, signing
 * keys (private JWK encrypted at rest), device-flow poll tracking and the audit log.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('clients', (t) => {
    t.text('id').primary();
    t.jsonb('metadata').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('oidc_payloads', (t) => {
    t.text('id').notNullable();
    t.text('type').notNullable();
    t.jsonb('payload').notNullable();
    t.text('grant_id');
    t.text('user_code');
    t.text('uid');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('consumed_at', { useTz: true });
    t.primary(['type', 'id']);
    t.index(['grant_id'], 'oidc_payloads_grant_id_idx');
    t.index(['uid'], 'oidc_payloads_uid_idx');
    t.index(['user_code'], 'oidc_payloads_user_code_idx');
    t.index(['expires_at'], 'oidc_payloads_expires_at_idx');
  });

  await knex.schema.createTable('signing_keys', (t) => {
    t.text('kid').primary();
    t.text('alg').notNullable();
    t.jsonb('public_jwk').notNullable();
    /** AES-256-GCM ciphertext of the private JWK (see apps/auth-server keys). */
    t.text('private_jwk_enc').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    /** Set when a newer key of the same alg took over; published until `expires_at`. */
    t.timestamp('retired_at', { useTz: true });
    t.timestamp('expires_at', { useTz: true });
  });

  await knex.schema.createTable('device_polls', (t) => {
    t.text('id').primary();
    t.timestamp('last_poll_at', { useTz: true }).notNullable();
    t.integer('interval_s').notNullable();
    t.boolean('slow').notNullable().defaultTo(false);
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('audit_events', (t) => {
    t.bigIncrements('id').primary();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('kind').notNullable();
    t.text('client_id');
    t.text('subject');
    t.text('grant_id');
    t.jsonb('detail').notNullable().defaultTo('{}');
    t.index(['at'], 'audit_events_at_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'audit_events',
    'device_polls',
    'signing_keys',
    'oidc_payloads',
    'clients',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
