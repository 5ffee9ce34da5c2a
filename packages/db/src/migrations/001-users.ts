import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.text('id').primary();
    t.text('email').notNullable();
    t.text('name');
    t.jsonb('roles').notNullable().defaultTo('[]');
    t.text('password_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // Case-insensitive uniqueness (RFC 5321 local parts may be case-sensitive, but no user
  // expects Alice@x and alice@x to be two accounts).
  await knex.raw('CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('users');
}
