import type { Db } from './create-db.js';
import { isUniqueViolation } from './errors.js';

/** The id of Portcullis's own API (migration 029): its identifier is each app's API_AUDIENCE. */
export const BUILT_IN_RESOURCE_ID = '00000000-0000-4000-8000-000000000001';

/** A permission's name: `<resource>:<action>` or `<resource>:*`, lower-case ASCII (docs/roles.md). */
export const PERMISSION_NAME = /^[a-z][a-z0-9-]{0,39}:(\*|[a-z][a-z0-9-]{0,39})$/;

/** An API's identifier: the built-in one's is the reading app's API_AUDIENCE (migration 029). */
export function identifierOf(
  resource: { builtIn: boolean; identifier: string | null },
  apiAudience: string,
): string {
  return resource.builtIn ? apiAudience : (resource.identifier ?? '');
}

export interface PermissionRecord {
  name: string;
  description: string;
}

/** One registered API (migration 029). */
export interface ResourceRecord {
  id: string;
  /** The RFC 8707 resource and the tokens' `aud`; null for the built-in API (API_AUDIENCE). */
  identifier: string | null;
  name: string;
  /** Seconds; null: ACCESS_TOKEN_TTL. */
  accessTokenTtl: number | null;
  /** null: the server's newest signing key. */
  signingAlg: string | null;
  dpopRequired: boolean;
  followsDenyList: boolean;
  builtIn: boolean;
  permissions: PermissionRecord[];
  createdAt: Date;
  updatedAt: Date;
}

export type ResourceSettings = Pick<
  ResourceRecord,
  'name' | 'accessTokenTtl' | 'signingAlg' | 'dpopRequired' | 'followsDenyList'
>;

export interface NewResource extends Partial<ResourceSettings> {
  identifier: string;
  name: string;
  permissions?: readonly PermissionRecord[] | undefined;
}

export interface ResourceStore {
  list(): Promise<ResourceRecord[]>;
  get(id: string): Promise<ResourceRecord | undefined>;
  /** undefined when the identifier is taken. */
  create(resource: NewResource): Promise<ResourceRecord | undefined>;
  /** The row before and after; undefined when there is none, `conflict` when the identifier is taken. */
  update(
    id: string,
    patch: Partial<ResourceSettings> & { identifier?: string | undefined },
  ): Promise<{ before: ResourceRecord; after: ResourceRecord } | 'conflict' | undefined>;
  /** The deleted row and the roles that lost grants with it. */
  delete(id: string): Promise<{ resource: ResourceRecord; roles: string[] } | undefined>;
  /** Creates or describes one permission; undefined when the resource does not exist. */
  putPermission(
    id: string,
    permission: PermissionRecord,
  ): Promise<{ created: boolean; before: PermissionRecord | undefined } | undefined>;
  /** The roles that granted it; undefined when there was no such permission. */
  deletePermission(id: string, name: string): Promise<{ roles: string[] } | undefined>;
}

interface ResourceRow {
  id: string;
  identifier: string | null;
  name: string;
  access_token_ttl: number | null;
  signing_alg: string | null;
  dpop_required: boolean;
  follows_deny_list: boolean;
  built_in: boolean;
  created_at: Date;
  updated_at: Date;
}

interface PermissionRow {
  resource_id: string;
  name: string;
  description: string;
}

const COLUMNS = {
  name: 'name',
  accessTokenTtl: 'access_token_ttl',
  signingAlg: 'signing_alg',
  dpopRequired: 'dpop_required',
  followsDenyList: 'follows_deny_list',
  identifier: 'identifier',
} as const;

function toRecord(r: ResourceRow, permissions: PermissionRow[]): ResourceRecord {
  return {
    id: r.id,
    identifier: r.identifier,
    name: r.name,
    accessTokenTtl: r.access_token_ttl,
    signingAlg: r.signing_alg,
    dpopRequired: r.dpop_required,
    followsDenyList: r.follows_deny_list,
    builtIn: r.built_in,
    permissions: permissions
      .filter((p) => p.resource_id === r.id)
      .map(({ name, description }) => ({ name, description })),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The registered APIs and their permissions; callers validate names and values (the admin API). */
export function createResourceStore(db: Db): ResourceStore {
  async function read(trx: Db, id: string): Promise<ResourceRecord | undefined> {
    // No query for an id no row can have (PostgreSQL would refuse the cast).
    if (!UUID.test(id)) return undefined;
    const row = await trx<ResourceRow>('resource_servers').where({ id }).first();
    if (!row) return undefined;
    const permissions = await trx<PermissionRow>('resource_permissions')
      .where({ resource_id: id })
      .orderBy('name');
    return toRecord(row, permissions);
  }

  async function rolesGranting(trx: Db, id: string, permission?: string): Promise<string[]> {
    const rows = await trx('role_permissions')
      .where({ resource_id: id, ...(permission === undefined ? {} : { permission }) })
      .distinct('role')
      .orderBy('role');
    return (rows as { role: string }[]).map((r) => r.role);
  }

  return {
    async list() {
      const rows = await db<ResourceRow>('resource_servers').orderBy([
        { column: 'built_in', order: 'desc' },
        { column: 'name' },
      ]);
      const permissions = await db<PermissionRow>('resource_permissions').orderBy('name');
      return rows.map((r) => toRecord(r, permissions));
    },
    get: (id) => read(db, id),
    async create(resource) {
      try {
        return await db.transaction(async (trx) => {
          const [row] = await trx<ResourceRow>('resource_servers')
            .insert({
              identifier: resource.identifier,
              name: resource.name,
              access_token_ttl: resource.accessTokenTtl ?? null,
              signing_alg: resource.signingAlg ?? null,
              dpop_required: resource.dpopRequired ?? false,
              follows_deny_list: resource.followsDenyList ?? false,
            } as never)
            .returning('*');
          const id = (row as ResourceRow).id;
          const permissions = resource.permissions ?? [];
          if (permissions.length > 0) {
            await trx('resource_permissions').insert(
              permissions.map((p) => ({ resource_id: id, ...p })),
            );
          }
          return (await read(trx as unknown as Db, id))!;
        });
      } catch (error) {
        if (isUniqueViolation(error)) return undefined;
        throw error;
      }
    },
    async update(id, patch) {
      if (!UUID.test(id)) return undefined;
      try {
        return await db.transaction(async (trx) => {
          const before = await read(trx as unknown as Db, id);
          if (!before) return undefined;
          const values: Record<string, unknown> = {};
          for (const [key, column] of Object.entries(COLUMNS)) {
            const value = patch[key as keyof typeof patch];
            if (value !== undefined) values[column] = value;
          }
          await trx('resource_servers')
            .where({ id })
            .update({ ...values, updated_at: trx.fn.now() });
          return { before, after: (await read(trx as unknown as Db, id))! };
        });
      } catch (error) {
        if (isUniqueViolation(error)) return 'conflict';
        throw error;
      }
    },
    async delete(id) {
      if (!UUID.test(id)) return undefined;
      return db.transaction(async (trx) => {
        const resource = await read(trx as unknown as Db, id);
        if (!resource) return undefined;
        const roles = await rolesGranting(trx as unknown as Db, id);
        await trx('resource_servers').where({ id }).del();
        return { resource, roles };
      });
    },
    async putPermission(id, { name, description }) {
      if (!UUID.test(id)) return undefined;
      return db.transaction(async (trx) => {
        const resource = await trx('resource_servers').where({ id }).forUpdate().first();
        if (!resource) return undefined;
        const before = await trx<PermissionRow>('resource_permissions')
          .where({ resource_id: id, name })
          .first();
        if (before) {
          await trx('resource_permissions')
            .where({ resource_id: id, name })
            .update({ description });
        } else {
          await trx('resource_permissions').insert({ resource_id: id, name, description });
        }
        await trx('resource_servers').where({ id }).update({ updated_at: trx.fn.now() });
        return {
          created: !before,
          before: before ? { name, description: before.description } : undefined,
        };
      });
    },
    async deletePermission(id, name) {
      if (!UUID.test(id)) return undefined;
      return db.transaction(async (trx) => {
        const roles = await rolesGranting(trx as unknown as Db, id, name);
        const deleted = await trx('resource_permissions')
          .where({ resource_id: id, name })
          .del()
          .returning('name');
        if (deleted.length === 0) return undefined;
        await trx('resource_servers').where({ id }).update({ updated_at: trx.fn.now() });
        return { roles };
      });
    },
  };
}
