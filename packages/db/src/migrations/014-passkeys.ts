import type { Knex } from 'knex';

/**
 * Passkeys (WebAuthn credentials) of the auth server's users, and the challenges it has
 * handed out (README "Passkeys").
 * - `passkeys.id` is the credential id (base64url), unique across all users; the public
 *   key is COSE-encoded. `counter` is the authenticator's signature counter (0 for
 *   authenticators without one), `device_type` singleDevice or multiDevice and `backed_up`
 *   the backup state, both as the authenticator last reported them.
 * - A challenge is single-use: it is consumed by one conditional DELETE ... RETURNING, so of
 *   two verifications of one response at once, on any instances, exactly one finds it.
 *   `binding` names what asked for it (an interaction, a signed-in user's account page);
 *   `user_id` is the user it was issued for (null for a sign-in with no user known yet).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('passkeys', (t) => {
    t.text('id').primary();
    t.text('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('name').notNullable();
    t.binary('public_key').notNullable();
    t.bigInteger('counter').notNullable().defaultTo(0);
    t.jsonb('transports').notNullable().defaultTo('[]');
    t.text('device_type').notNullable();
    t.boolean('backed_up').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.index(['user_id', 'created_at'], 'passkeys_user_id_idx');
  });
  await knex.raw(
    "ALTER TABLE passkeys ADD CONSTRAINT passkeys_device_type_check CHECK (device_type IN ('singleDevice', 'multiDevice'))",
  );

  await knex.schema.createTable('webauthn_challenges', (t) => {
    t.text('challenge').primary();
    t.text('purpose').notNullable();
    t.text('binding').notNullable();
    t.text('user_id').references('id').inTable('users').onDelete('CASCADE');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at'], 'webauthn_challenges_expires_at_idx');
  });
  await knex.raw(
    "ALTER TABLE webauthn_challenges ADD CONSTRAINT webauthn_challenges_purpose_check CHECK (purpose IN ('register', 'authenticate'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webauthn_challenges');
  await knex.schema.dropTable('passkeys');
}
