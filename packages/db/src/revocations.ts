import type { Db } from './create-db.js';

/** One row of `revocations` (migrations 003 and 011), in the deny list's units. */
export interface RevocationRow {
  id: number;
  kind: 'jti' | 'grant' | 'subject';
  value: string;
  /** A logout's instant, Unix seconds with milliseconds; null for tokens and grants. */
  before: number | null;
  expiresAt: number;
}

export type NewRevocation = Omit<RevocationRow, 'id'>;

export interface RevocationStore {
  insert(revocation: NewRevocation): Promise<void>;
  /** With `recent`, also rows of the last 5 s: ids are taken at insert but visible at commit. */
  readAfter(afterId: number, options: { recent: boolean; limit: number }): Promise<RevocationRow[]>;
  purgeExpired(): Promise<void>;
}

const SELECT = `select id, kind, value, issued_before, extract(epoch from expires_at)::float8 as expires_at
  from revocations where expires_at > now() and `;

function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

// Never inside a transaction on PGlite (single connection, deadlock): the deny list reads from timers.
export function createRevocationStore(db: Db): RevocationStore {
  return {
    async insert(r) {
      // `issued_before` is stored in milliseconds (migration 011).
      const beforeMs = r.before === null ? null : Math.round(r.before * 1000);
      await db.raw(
        'insert into revocations (kind, value, issued_before, expires_at) values (?, ?, ?, to_timestamp(?))',
        [r.kind, r.value, beforeMs, r.expiresAt],
      );
    },
    async readAfter(afterId, { recent, limit }) {
      const where = recent ? `(id > ? or created_at > now() - interval '5 seconds')` : 'id > ?';
      const result = await db.raw(`${SELECT}${where} order by id limit ${Number(limit)}`, [
        afterId,
      ]);
      return rowsOf(result).map((row) => ({
        id: Number(row['id']),
        kind: row['kind'] as RevocationRow['kind'],
        value: String(row['value']),
        before: row['issued_before'] == null ? null : Number(row['issued_before']) / 1000,
        expiresAt: Number(row['expires_at']),
      }));
    },
    async purgeExpired() {
      await db.raw(`delete from revocations where expires_at < now() - interval '1 minute'`);
    },
  };
}
