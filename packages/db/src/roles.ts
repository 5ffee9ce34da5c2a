import type { RoleSource } from '@portcullis/claims';
import type { Db } from './create-db.js';
import { BUILT_IN_RESOURCE_ID, type ResourceRecord } from './resources.js';
import { toJsonb } from './values.js';

/** A role's name: lower-case ASCII, as a token's `roles` carries it (docs/roles.md). */
export const ROLE_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** What a role grants on one registered API (migration 029). */
export interface RoleGrant {
  resourceId: string;
  permissions: string[];
}

/** One row of `roles` (migrations 026 and 029) with its grants. */
export interface RoleRecord {
  name: string;
  description: string;
  /** Seeded (admin, editor, viewer): editable, never deleted. */
  builtIn: boolean;
  /** By resource, each resource once, permissions sorted. */
  grants: RoleGrant[];
  createdAt: Date;
  updatedAt: Date;
}

/** Who still names a role: a delete waits until none does. */
export interface RoleHolders {
  users: number;
  clients: number;
}

export interface RoleStore {
  list(): Promise<RoleRecord[]>;
  get(name: string): Promise<RoleRecord | undefined>;
  /** Creates or replaces the role's permissions and description; `created` tells which. */
  /** Replaces the grants whole; each permission must be one of its resource's (the caller checks). */
  put(
    name: string,
    role: { grants: readonly RoleGrant[]; description?: string | undefined },
  ): Promise<{ role: RoleRecord; created: boolean; before: RoleRecord | undefined }>;
  /** The deleted role; undefined when there was none. */
  delete(name: string): Promise<RoleRecord | undefined>;
  /** The names of `names` that are no role. */
  unknown(names: readonly string[]): Promise<string[]>;
  holders(name: string): Promise<RoleHolders>;
}

interface RoleRow {
  name: string;
  description: string;
  built_in: boolean;
  created_at: Date;
  updated_at: Date;
}

interface GrantRow {
  role: string;
  resource_id: string;
  permission: string;
}

function grantsOf(role: string, rows: readonly GrantRow[]): RoleGrant[] {
  const byResource = new Map<string, string[]>();
  for (const g of rows) {
    if (g.role !== role) continue;
    byResource.set(g.resource_id, [...(byResource.get(g.resource_id) ?? []), g.permission]);
  }
  return [...byResource]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([resourceId, permissions]) => ({ resourceId, permissions: permissions.sort() }));
}

const toRecord = (r: RoleRow, grants: readonly GrantRow[]): RoleRecord => ({
  name: r.name,
  description: r.description,
  grants: grantsOf(r.name, grants),
  builtIn: r.built_in,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

/** The `roles` table and its grants; names are checked against ROLE_NAME by the callers. */
export function createRoleStore(db: Db): RoleStore {
  async function grantRows(trx: Db, names?: readonly string[]): Promise<GrantRow[]> {
    const query = trx<GrantRow>('role_permissions').select('role', 'resource_id', 'permission');
    if (names) void query.whereIn('role', names as string[]);
    return query;
  }

  return {
    async list() {
      const rows = await db<RoleRow>('roles').orderBy('name');
      const grants = await grantRows(db);
      return rows.map((r) => toRecord(r, grants));
    },
    async get(name) {
      const row = await db<RoleRow>('roles').where({ name }).first();
      return row ? toRecord(row, await grantRows(db, [name])) : undefined;
    },
    async put(name, { grants, description }) {
      return db.transaction(async (trx) => {
        const t = trx as unknown as Db;
        const beforeRow = await trx<RoleRow>('roles').where({ name }).forUpdate().first();
        const before = beforeRow ? toRecord(beforeRow, await grantRows(t, [name])) : undefined;
        const values = description === undefined ? {} : { description };
        const [row] = beforeRow
          ? await trx<RoleRow>('roles')
              .where({ name })
              .update({ ...values, updated_at: trx.fn.now() } as never)
              .returning('*')
          : await trx<RoleRow>('roles')
              .insert({ name, ...values } as never)
              .returning('*');
        await trx('role_permissions').where({ role: name }).del();
        const rows = grants.flatMap((g) =>
          [...new Set(g.permissions)].map((permission) => ({
            role: name,
            resource_id: g.resourceId,
            permission,
          })),
        );
        if (rows.length > 0) await trx('role_permissions').insert(rows);
        return {
          role: toRecord(row as RoleRow, await grantRows(t, [name])),
          created: !before,
          before,
        };
      });
    },
    async delete(name) {
      return db.transaction(async (trx) => {
        const grants = await grantRows(trx as unknown as Db, [name]);
        const [row] = await trx<RoleRow>('roles').where({ name }).del().returning('*');
        return row ? toRecord(row as RoleRow, grants) : undefined;
      });
    },
    async unknown(names) {
      const wanted = [...new Set(names)];
      if (wanted.length === 0) return [];
      const found = new Set(
        (await db<RoleRow>('roles').whereIn('name', wanted).select('name')).map((r) => r.name),
      );
      return wanted.filter((n) => !found.has(n));
    },
    async holders(name) {
      const held = toJsonb([name]);
      const result = await db.raw(
        `select (select count(*) from users where roles @> ?::jsonb) as users,
                (select count(*) from clients where metadata->'roles' @> ?::jsonb) as clients`,
        [held, held],
      );
      const row = rowsOf(result)[0] ?? {};
      return { users: Number(row['users'] ?? 0), clients: Number(row['clients'] ?? 0) };
    },
  };
}

/** A registered API as every instance holds it in memory (SharedCatalog). */
export interface CatalogResource extends Omit<
  ResourceRecord,
  'permissions' | 'createdAt' | 'updatedAt'
> {
  /** Permission name -> its description, in name order. */
  permissions: ReadonlyMap<string, string>;
}

/**
 * The registered APIs, their permissions and what each role grants on each, kept in memory and
 * in step with the tables: every instance learns a change within the poll (docs/roles.md).
 */
export interface SharedCatalog {
  /** Changes whenever anything in the catalogue changes. */
  readonly version: number;
  resources(): readonly CatalogResource[];
  resource(id: string): CatalogResource | undefined;
  /** The role's permissions on the resource; undefined for an unknown role. */
  grantsOf(role: string, resourceId: string): readonly string[] | undefined;
  /** The roles' permissions on one resource as a RoleSource (its version is the catalogue's). */
  rolesOn(resourceId: string): RoleSource;
  /** Loads the tables (before the first request), then polls them. */
  start(): Promise<void>;
  /** One read now (after a change made here, so this instance sees it at once). */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** Milliseconds time of the last successful read. */
  readonly lastSyncedAt: number | undefined;
}

export interface SharedCatalogOptions {
  db: Db;
  /** Default 1000 ms: a change reaches every instance within about a second. */
  pollIntervalMs?: number;
  now?: () => number;
  onError: (error: unknown) => void;
}

interface CatalogRows {
  resources: Omit<CatalogResource, 'permissions'>[];
  permissions: { resource_id: string; name: string; description: string }[];
  roles: string[];
  grants: GrantRow[];
}

async function readCatalog(db: Db): Promise<CatalogRows> {
  const resources = await db('resource_servers')
    .select(
      'id',
      'identifier',
      'name',
      'access_token_ttl as accessTokenTtl',
      'signing_alg as signingAlg',
      'dpop_required as dpopRequired',
      'follows_deny_list as followsDenyList',
      'built_in as builtIn',
    )
    .orderBy('id');
  const permissions = await db('resource_permissions')
    .select('resource_id', 'name', 'description')
    .orderBy(['resource_id', 'name']);
  const roles = (await db('roles').select('name').orderBy('name')).map(
    (r: { name: string }) => r.name,
  );
  const grants = await db<GrantRow>('role_permissions')
    .select('role', 'resource_id', 'permission')
    .orderBy(['role', 'resource_id', 'permission']);
  return { resources, permissions, roles, grants };
}

/** Until the first read nothing is registered and every role grants nothing; a failed read keeps the last. */
export function createSharedCatalog(options: SharedCatalogOptions): SharedCatalog {
  const { db, onError } = options;
  const pollInterval = options.pollIntervalMs ?? 1000;
  const now = options.now ?? Date.now;
  let resources: CatalogResource[] = [];
  let byId = new Map<string, CatalogResource>();
  // role -> resource id -> permissions
  let grants = new Map<string, Map<string, readonly string[]>>();
  let fingerprint = '';
  let version = 0;
  let lastSyncedAt: number | undefined;
  let polling: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  // Whole tables each time: they are small, and a delete leaves no row to notice.
  async function read(): Promise<void> {
    const rows = await readCatalog(db);
    const next = JSON.stringify(rows);
    if (next !== fingerprint) {
      resources = rows.resources.map((r) => ({
        ...r,
        permissions: new Map(
          rows.permissions
            .filter((p) => p.resource_id === r.id)
            .map((p) => [p.name, p.description]),
        ),
      }));
      byId = new Map(resources.map((r) => [r.id, r]));
      grants = new Map(rows.roles.map((role) => [role, new Map()]));
      for (const g of rows.grants) {
        const held = grants.get(g.role);
        if (held) held.set(g.resource_id, [...(held.get(g.resource_id) ?? []), g.permission]);
      }
      fingerprint = next;
      version += 1;
    }
    lastSyncedAt = now();
  }

  function sync(): Promise<void> {
    polling ??= read().finally(() => {
      polling = undefined;
    });
    return polling;
  }

  const catalog: SharedCatalog = {
    get version() {
      return version;
    },
    resources: () => resources,
    resource: (id) => byId.get(id),
    grantsOf(role, resourceId) {
      const held = grants.get(role);
      return held ? (held.get(resourceId) ?? []) : undefined;
    },
    rolesOn(resourceId) {
      return {
        permissionsOf: (role: string) => catalog.grantsOf(role, resourceId),
        get version() {
          return version;
        },
      };
    },
    async start() {
      if (timer) return;
      await sync();
      timer = setInterval(() => void sync().catch(onError), pollInterval);
      timer.unref();
    },
    sync,
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await polling?.catch(() => undefined);
    },
    get lastSyncedAt() {
      return lastSyncedAt;
    },
  };
  return catalog;
}

/** The roles' permissions on one API kept in step with the tables (the Portcullis API's). */
export interface SharedRoles extends RoleSource {
  readonly version: number;
  /** The API's registered permissions, in name order (its RFC 9728 `scopes_supported`). */
  permissions(): readonly string[];
  /** Loads the tables (before the first request), then polls them. */
  start(): Promise<void>;
  /** One read now. */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** Milliseconds time of the last successful read. */
  readonly lastSyncedAt: number | undefined;
}

export interface SharedRolesOptions extends SharedCatalogOptions {
  /** Default: the built-in API's. */
  resourceId?: string;
}

export function createSharedRoles(options: SharedRolesOptions): SharedRoles {
  const catalog = createSharedCatalog(options);
  const resourceId = options.resourceId ?? BUILT_IN_RESOURCE_ID;
  const roles = catalog.rolesOn(resourceId);
  return {
    permissionsOf: roles.permissionsOf,
    get version() {
      return catalog.version;
    },
    permissions: () => [...(catalog.resource(resourceId)?.permissions.keys() ?? [])],
    start: () => catalog.start(),
    sync: () => catalog.sync(),
    close: () => catalog.close(),
    get lastSyncedAt() {
      return catalog.lastSyncedAt;
    },
  };
}
