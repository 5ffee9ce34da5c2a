import type { Knex } from 'knex';

/**
 * `mail_outbox` (docs/mail.md):
 * - `claimed_by`: the worker that holds the row's lease, so a stopping instance hands back only
 *   its own rows (due at once) and a lapsed lease is known to have ended mid-attempt;
 * - `uncertain`: attempts that ended without knowing whether the SMTP server took the mail
 *   (a timeout after it was handed over, a stop or a crash mid-send); resends after them are
 *   bounded;
 * - `kind`, `payload`: a request whose mail the worker composes later (a password-reset
 *   request: the same one write before the answer whether or not the address exists).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.text('claimed_by');
    t.integer('uncertain').notNullable().defaultTo(0);
    t.text('kind');
    t.text('payload');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.dropColumn('payload');
    t.dropColumn('kind');
    t.dropColumn('uncertain');
    t.dropColumn('claimed_by');
  });
}
