import type { Knex } from 'knex';

/**
 * Browser sessions and API keys (apps/api). Neither table holds a usable secret: a
 * session is found by the SHA-256 of its cookie value, an API key by the SHA-256 hex of
 * the key (docs/api-contracts.md, credentials), so a database dump signs nobody in.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sessions', (t) => {
    t.text('id_hash').primary();
    t.text('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Absolute end of the session, however active it is.
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.text('user_agent');
    t.index(['user_id'], 'sessions_user_id_idx');
    t.index(['expires_at'], 'sessions_expires_at_idx');
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('owner_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('hash').notNullable().unique('api_keys_hash_key');
    t.jsonb('permissions').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.boolean('revoked').notNullable().defaultTo(false);
    t.timestamp('revoked_at', { useTz: true });
    // Requests per rate-limit window; null takes the configured default.
    t.integer('rate_limit');
    t.index(['owner_id', 'created_at', 'id'], 'api_keys_owner_idx');
  });
  await knex.raw(
    "ALTER TABLE api_keys ADD CONSTRAINT api_keys_hash_check CHECK (hash ~ '^[0-9a-f]{64}$')",
  );
  await knex.raw(
    'ALTER TABLE api_keys ADD CONSTRAINT api_keys_rate_limit_check CHECK (rate_limit IS NULL OR rate_limit > 0)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('sessions');
}
