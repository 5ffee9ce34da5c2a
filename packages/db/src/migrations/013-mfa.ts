import type { Knex } from 'knex';

/**
 * Second sign-in factors of the auth server's users (README "Multi-factor sign-in"):
 * - `mfa_totp`: one authenticator app per user (RFC 6238). `secret_enc` is the shared
 *   secret sealed with KEY_ENCRYPTION_KEY, as the signing keys are. A row without
 *   `confirmed_at` is an enrolment in progress (no valid code seen yet) and signs nobody
 *   in. `last_used_step` is the time step of the last accepted code: a code is accepted
 *   only for a later step, so none works twice.
 * - `mfa_recovery_codes`: one-time codes, stored as SHA-256 digests (they are 80 random
 *   bits: a slow hash adds nothing); `used_at` is set by the one UPDATE that accepts one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mfa_totp', (t) => {
    t.text('user_id').primary().references('id').inTable('users').onDelete('CASCADE');
    t.text('secret_enc').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('confirmed_at', { useTz: true });
    t.bigInteger('last_used_step');
    t.timestamp('last_used_at', { useTz: true });
  });
  await knex.schema.createTable('mfa_recovery_codes', (t) => {
    t.text('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('code_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('used_at', { useTz: true });
    t.primary(['user_id', 'code_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mfa_recovery_codes');
  await knex.schema.dropTable('mfa_totp');
}
