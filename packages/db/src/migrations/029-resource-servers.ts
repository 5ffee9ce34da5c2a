import type { Knex } from 'knex';

/**
 * Resource servers as data (docs/roles.md): `resource_servers` (an API by its RFC 8707
 * identifier), `resource_permissions` (what each one's tokens may allow) and `role_permissions`
 * (what a role grants on which API), which replaces `roles.permissions`. Portcullis's own API is
 * the built-in row: its identifier is API_AUDIENCE, read by each app, so it is stored as null.
 * Its catalogue and the built-in roles' grants are frozen here as they were when written.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('resource_servers', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('identifier').unique('resource_servers_identifier_key');
    t.text('name').notNullable();
    t.integer('access_token_ttl');
    t.text('signing_alg');
    t.boolean('dpop_required').notNullable().defaultTo(false);
    t.boolean('follows_deny_list').notNullable().defaultTo(false);
    t.boolean('built_in').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // One built-in row, and only it without an identifier.
  await knex.raw(
    `alter table resource_servers add constraint resource_servers_identifier_check
       check ((identifier is null) = built_in)`,
  );
  await knex.raw(
    'create unique index resource_servers_one_built_in on resource_servers (built_in) where built_in',
  );
  await knex.schema.createTable('resource_permissions', (t) => {
    t.uuid('resource_id')
      .notNullable()
      .references('id')
      .inTable('resource_servers')
      .onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.primary(['resource_id', 'name']);
  });
  await knex.schema.createTable('role_permissions', (t) => {
    t.text('role').notNullable().references('name').inTable('roles').onDelete('CASCADE');
    t.uuid('resource_id').notNullable();
    t.text('permission').notNullable();
    t.primary(['role', 'resource_id', 'permission']);
    t.foreign(['resource_id', 'permission'])
      .references(['resource_id', 'name'])
      .inTable('resource_permissions')
      .onDelete('CASCADE');
  });

  await knex('resource_servers').insert({
    id: BUILT_IN_ID,
    identifier: null,
    name: 'Portcullis API',
    follows_deny_list: true,
    built_in: true,
  });
  await knex('resource_permissions').insert(
    CATALOGUE.map(([name, description]) => ({ resource_id: BUILT_IN_ID, name, description })),
  );
  // Every role's permissions, built-in or made since, move to the built-in API; a permission
  // outside the catalogue (none could be stored) is left behind.
  const known = new Set(CATALOGUE.map(([name]) => name));
  const roles = await knex('roles').select('name', 'permissions');
  const grants = roles.flatMap((r: { name: string; permissions: unknown }) =>
    permissionsOf(r.permissions)
      .filter((p) => known.has(p))
      .map((permission) => ({ role: r.name, resource_id: BUILT_IN_ID, permission })),
  );
  if (grants.length > 0) await knex('role_permissions').insert(grants);
  await knex.schema.alterTable('roles', (t) => t.dropColumn('permissions'));
}

function permissionsOf(value: unknown): string[] {
  const list = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(list) ? [...new Set(list.filter((p) => typeof p === 'string'))] : [];
}

const BUILT_IN_ID = '00000000-0000-4000-8000-000000000001';

// Frozen: the API's permissions and what a user reads of each on the consent page.
const CATALOGUE: readonly (readonly [string, string])[] = [
  ['users:read', 'See user accounts'],
  ['users:write', 'Change user accounts'],
  ['users:delete', 'Delete user accounts'],
  ['users:*', 'Everything on user accounts'],
  ['orders:read', 'See orders'],
  ['orders:write', 'Place and change orders'],
  ['orders:delete', 'Delete orders'],
  ['orders:*', 'Everything on orders'],
  ['payments:read', 'See payments'],
  ['payments:create', 'Make payments'],
  ['payments:*', 'Everything on payments'],
  ['events:read', 'See the event feed'],
  ['uploads:read', 'See uploaded files'],
  ['uploads:create', 'Upload files'],
  ['uploads:delete', 'Delete uploaded files'],
  ['uploads:*', 'Everything on uploaded files'],
  ['api-keys:read', 'See API keys'],
  ['api-keys:create', 'Create API keys'],
  ['api-keys:delete', 'Delete API keys'],
  ['api-keys:*', 'Everything on API keys'],
];

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('roles', (t) => {
    t.jsonb('permissions').notNullable().defaultTo('[]');
  });
  const grants = await knex('role_permissions')
    .where({ resource_id: BUILT_IN_ID })
    .select('role', 'permission');
  const byRole = new Map<string, string[]>();
  for (const g of grants as { role: string; permission: string }[]) {
    byRole.set(g.role, [...(byRole.get(g.role) ?? []), g.permission]);
  }
  for (const [role, permissions] of byRole) {
    await knex('roles')
      .where({ name: role })
      .update({ permissions: JSON.stringify(permissions) });
  }
  await knex.schema.dropTable('role_permissions');
  await knex.schema.dropTable('resource_permissions');
  await knex.schema.dropTable('resource_servers');
}
