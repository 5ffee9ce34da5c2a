import type { Knex } from 'knex';

/**
 * An authenticator app's enrolment in progress belongs to what started it (README
 * "Multi-factor sign-in"): `enrolment_owner` is the SHA-256 digest of that owner (a
 * sign-in's interaction, or an account-page session), so its key is never shown to, nor
 * confirmed by, another session. Null once confirmed, and for rows from before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mfa_totp', (t) => {
    t.text('enrolment_owner');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mfa_totp', (t) => {
    t.dropColumn('enrolment_owner');
  });
}
