import type { Knex } from 'knex';
import { ROLE_PERMISSIONS } from '@portcullis/claims';

/**
 * `roles`: each role and the permissions it grants, edited through the admin API (docs/roles.md);
 * seeded with the built-in roles, which the published claims package keeps as its default.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('roles', (t) => {
    t.text('name').primary();
    t.jsonb('permissions').notNullable().defaultTo('[]');
    t.text('description').notNullable().defaultTo('');
    t.boolean('built_in').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex('roles').insert(
    Object.entries(ROLE_PERMISSIONS).map(([name, permissions]) => ({
      name,
      permissions: JSON.stringify(permissions),
      description: SEED_DESCRIPTIONS[name] ?? '',
      built_in: true,
    })),
  );
}

const SEED_DESCRIPTIONS: Record<string, string> = {
  admin: 'Everything: every resource, every action',
  editor: 'Reads and writes orders, creates payments, manages uploads',
  viewer: 'Reads users, orders and events',
};

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('roles');
}
