import type { Knex } from 'knex';

/**
 * `roles`: each role and the permissions it grants, edited through the admin API (docs/roles.md);
 * seeded with the built-in roles as the claims package defined them when this was written.
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
    SEED.map(({ name, permissions, description }) => ({
      name,
      permissions: JSON.stringify(permissions),
      description,
      built_in: true,
    })),
  );
}

// Frozen: a later change to the live role table must not change what this migration writes.
const SEED: readonly { name: string; permissions: readonly string[]; description: string }[] = [
  {
    name: 'admin',
    permissions: ['users:*', 'orders:*', 'payments:*', 'events:read', 'uploads:*', 'api-keys:*'],
    description: 'Everything: every resource, every action',
  },
  {
    name: 'editor',
    permissions: [
      'users:read',
      'orders:read',
      'orders:write',
      'payments:create',
      'events:read',
      'uploads:*',
    ],
    description: 'Reads and writes orders, creates payments, manages uploads',
  },
  {
    name: 'viewer',
    permissions: ['users:read', 'orders:read', 'events:read'],
    description: 'Reads users, orders and events',
  },
];

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('roles');
}
