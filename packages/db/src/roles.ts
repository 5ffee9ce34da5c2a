import type { RoleSource } from '@portcullis/claims';
import type { Db } from './create-db.js';
import { toJsonb } from './values.js';

/** A role's name: lower-case ASCII, as a token's `roles` carries it (docs/roles.md). */
export const ROLE_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** One row of `roles` (migration 026). */
export interface RoleRecord {
  name: string;
  permissions: string[];
  description: string;
  /** Seeded (admin, editor, viewer): editable, never deleted. */
  builtIn: boolean;
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
  put(
    name: string,
    role: { permissions: readonly string[]; description?: string | undefined },
  ): Promise<{ role: RoleRecord; created: boolean; before: RoleRecord | undefined }>;
  /** The deleted role; undefined when there was none. */
  delete(name: string): Promise<RoleRecord | undefined>;
  /** The names of `names` that are no role. */
  unknown(names: readonly string[]): Promise<string[]>;
  holders(name: string): Promise<RoleHolders>;
}

interface RoleRow {
  name: string;
  permissions: string[];
  description: string;
  built_in: boolean;
  created_at: Date;
  updated_at: Date;
}

const toRecord = (r: RoleRow): RoleRecord => ({
  name: r.name,
  permissions: r.permissions,
  description: r.description,
  builtIn: r.built_in,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

/** The `roles` table; names are checked against ROLE_NAME by the callers (the admin API). */
export function createRoleStore(db: Db): RoleStore {
  return {
    async list() {
      return (await db<RoleRow>('roles').orderBy('name')).map(toRecord);
    },
    async get(name) {
      const row = await db<RoleRow>('roles').where({ name }).first();
      return row ? toRecord(row) : undefined;
    },
    async put(name, { permissions, description }) {
      return db.transaction(async (trx) => {
        const before = await trx<RoleRow>('roles').where({ name }).forUpdate().first();
        const values = {
          permissions: toJsonb([...new Set(permissions)]),
          ...(description === undefined ? {} : { description }),
        };
        const [row] = before
          ? await trx<RoleRow>('roles')
              .where({ name })
              .update({ ...values, updated_at: trx.fn.now() } as never)
              .returning('*')
          : await trx<RoleRow>('roles')
              .insert({ name, ...values } as never)
              .returning('*');
        return {
          role: toRecord(row as RoleRow),
          created: !before,
          before: before ? toRecord(before) : undefined,
        };
      });
    },
    async delete(name) {
      const [row] = await db<RoleRow>('roles').where({ name }).del().returning('*');
      return row ? toRecord(row as RoleRow) : undefined;
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

/** The role table kept in memory and in step with `roles`: every instance learns within the poll. */
export interface SharedRoles extends RoleSource {
  readonly version: number;
  /** Loads the table (before the first request), then polls it. */
  start(): Promise<void>;
  /** One read now. */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** Milliseconds time of the last successful read. */
  readonly lastSyncedAt: number | undefined;
}

export interface SharedRolesOptions {
  db: Db;
  /** Default 1000 ms: a change reaches every instance within about a second. */
  pollIntervalMs?: number;
  now?: () => number;
  onError: (error: unknown) => void;
}

/** Until the first read every role grants nothing; a failed read keeps the last table. */
export function createSharedRoles(options: SharedRolesOptions): SharedRoles {
  const { db, onError } = options;
  const pollInterval = options.pollIntervalMs ?? 1000;
  const now = options.now ?? Date.now;
  let table = new Map<string, readonly string[]>();
  let fingerprint = '';
  let version = 0;
  let lastSyncedAt: number | undefined;
  let polling: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  // The whole table each time: it is small, and a delete leaves no row to notice.
  async function read(): Promise<void> {
    const rows = await db<RoleRow>('roles').select('name', 'permissions').orderBy('name');
    const next = JSON.stringify(rows.map((r) => [r.name, r.permissions]));
    if (next !== fingerprint) {
      table = new Map(rows.map((r) => [r.name, Object.freeze([...r.permissions])]));
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

  return {
    permissionsOf: (role) => table.get(role),
    get version() {
      return version;
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
}
