import type { Knex } from 'knex';

/**
 * Payments with their idempotency records, the event outbox and uploads
 * (apps/api). Owners are token subjects (users or `client:` ids), as for orders: no
 * foreign key to users, so bookkeeping outlives a deleted user.
 */
export async function up(knex: Knex): Promise<void> {
  // One row per (subject, Idempotency-Key). `id` is regenerated when an expired row is
  // reclaimed, and payments reference it: one payment per claim, never two.
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('subject').notNullable();
    t.text('key').notNullable();
    t.uuid('id').notNullable().unique('idempotency_keys_id_key');
    t.text('request_hash').notNullable();
    t.text('state').notNullable();
    t.integer('response_status');
    t.jsonb('response_headers');
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable();
    // Who holds an in-flight claim, and since when (a stale claim may be taken over).
    t.timestamp('locked_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['subject', 'key']);
    t.index(['expires_at'], 'idempotency_keys_expires_at_idx');
  });
  await knex.raw(
    "ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('in_flight', 'completed'))",
  );

  await knex.schema.createTable('payments', (t) => {
    t.text('id').primary();
    t.text('user_id').notNullable();
    t.text('order_id').notNullable();
    t.bigInteger('amount').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.text('status').notNullable();
    t.text('provider_ref').notNullable();
    t.uuid('idempotency_id').notNullable().unique('payments_idempotency_id_key');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['user_id', 'created_at', 'id'], 'payments_user_idx');
    t.index(['created_at', 'id'], 'payments_created_idx');
  });
  await knex.raw(
    "ALTER TABLE payments ADD CONSTRAINT payments_status_check CHECK (status IN ('succeeded', 'failed'))",
  );
  await knex.raw('ALTER TABLE payments ADD CONSTRAINT payments_amount_check CHECK (amount > 0)');

  // The outbox: written in the same transaction as the change it records. tx_id is the
  // writing transaction's id; a reader that only takes rows with tx_id below the oldest
  // running transaction (pg_snapshot_xmin) never skips a row that commits late.
  await knex.schema.createTable('events', (t) => {
    t.bigIncrements('id').primary();
    t.text('type').notNullable();
    t.text('subject_type').notNullable();
    t.text('subject_id').notNullable();
    t.text('owner_id');
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.bigInteger('tx_id').notNullable().defaultTo(knex.raw('(pg_current_xact_id()::text::bigint)'));
    t.index(['owner_id', 'created_at', 'id'], 'events_owner_idx');
    t.index(['created_at', 'id'], 'events_created_idx');
    t.index(['tx_id', 'id'], 'events_tx_idx');
  });

  await knex.schema.createTable('uploads', (t) => {
    t.text('id').primary();
    t.text('owner_id').notNullable();
    // pending (presigned, not yet received) | receiving | stored
    t.text('status').notNullable();
    t.text('filename').notNullable();
    t.text('content_type').notNullable();
    t.text('caption');
    t.bigInteger('size');
    // Presigned uploads: the most bytes the signed PUT may send.
    t.bigInteger('max_size');
    t.text('sha256');
    t.text('storage_key').notNullable().unique('uploads_storage_key_key');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('stored_at', { useTz: true });
    t.index(['owner_id', 'created_at'], 'uploads_owner_idx');
  });
  await knex.raw(
    "ALTER TABLE uploads ADD CONSTRAINT uploads_status_check CHECK (status IN ('pending', 'receiving', 'stored'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('uploads');
  await knex.schema.dropTable('events');
  await knex.schema.dropTable('payments');
  await knex.schema.dropTable('idempotency_keys');
}
