import type { Knex } from 'knex';

/**
 * Most artifact rows (tokens) carry no uid or user code, and some no grant: the lookup
 * indexes on those columns now hold only rows that have a value. Every refresh writes a
 * token row, and skipping two or three index entries per row is PostgreSQL work saved
 * on the hottest write; lookups by `column = value` use the partial index as before.
 */
const COLUMNS = ['grant_id', 'uid', 'user_code'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const column of COLUMNS) {
    await knex.raw(`drop index if exists oidc_payloads_${column}_idx`);
    await knex.raw(
      `create index oidc_payloads_${column}_idx on oidc_payloads (${column}) where ${column} is not null`,
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const column of COLUMNS) {
    await knex.raw(`drop index if exists oidc_payloads_${column}_idx`);
    await knex.raw(`create index oidc_payloads_${column}_idx on oidc_payloads (${column})`);
  }
}
