import type { Knex } from 'knex';

/**
 * Self-service accounts (README "Sign-up and password reset"):
 * - `users.email_verified_at`: when the address was proven; accounts from before count as verified;
 * - `account_tokens`: single-use links and codes mailed to a person, kept as SHA-256 digests;
 * - `mail_outbox`: every mail, kept until sent, retried with backoff (docs/mail.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.timestamp('email_verified_at', { useTz: true });
  });
  await knex('users').update({ email_verified_at: knex.ref('created_at') });
  await knex.schema.createTable('account_tokens', (t) => {
    t.text('token_hash').primary();
    t.text('purpose').notNullable();
    t.text('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('email');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'purpose']);
  });
  await knex.schema.createTable('mail_outbox', (t) => {
    t.bigIncrements('id');
    t.text('recipient').notNullable();
    t.text('subject').notNullable();
    t.text('text').notNullable();
    t.text('html');
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('last_error');
    t.timestamp('sent_at', { useTz: true });
    t.timestamp('failed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    'CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mail_outbox');
  await knex.schema.dropTable('account_tokens');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('email_verified_at');
  });
}
