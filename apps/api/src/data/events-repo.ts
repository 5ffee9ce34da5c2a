import type { AccountsRepo } from '@portcullis/accounts';
import { toJsonb, type Db, type EventRow } from '@portcullis/db';
import { currentWriteActor } from './write-actor.js';

/** The event outbox: each change writes its event in its own transaction (recordEvent). */
export const EVENT_TYPES = [
  'order.created',
  'order.updated',
  'order.cancelled',
  'order.deleted',
  'payment.succeeded',
  'payment.failed',
  'upload.stored',
  'user.deleted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const SUBJECT_TYPES = ['order', 'payment', 'upload', 'user'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

export interface NewEvent {
  type: EventType;
  subjectType: SubjectType;
  subjectId: string;
  ownerId: string | null;
  data: unknown;
  createdAt?: Date;
}

export interface EventRecord {
  /** The bigserial id as a string (pg returns bigints as strings). */
  id: string;
  type: EventType;
  subjectType: SubjectType;
  subjectId: string;
  ownerId: string | null;
  data: unknown;
  /** ISO 8601 with microseconds, exactly as stored (the feed cursor compares it). */
  createdAt: string;
  /** RFC 8693: the services that wrote it for the owner, the latest first; absent if none. */
  actor?: string[];
}

/** Who sees which events: their own, plus every event of a type whose wildcard they hold. */
export interface EventVisibility {
  ownerId: string;
  subjectTypes: readonly SubjectType[];
}

export interface FeedPosition {
  at: string;
  id?: string | undefined;
}

export interface TailPosition {
  tx: string;
  id: string;
}

export interface EventsRepo {
  list(
    visibility: EventVisibility,
    page: { before?: FeedPosition | undefined; limit: number },
  ): Promise<EventRecord[]>;
  listAfter(visibility: EventVisibility, afterId: string, limit: number): Promise<EventRecord[]>;
  tailStart(): Promise<TailPosition>;
  /** Events after `from` of finished transactions (tx_id < xmin), in (tx_id, id) order: gap-free. */
  tail(from: TailPosition, limit: number): Promise<{ events: EventRecord[]; next: TailPosition }>;
}

const ISO_US = `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const COLUMNS = ['id', 'type', 'subject_type', 'subject_id', 'owner_id', 'data', 'tx_id', 'actor'];

type SelectedRow = Omit<EventRow, 'created_at'> & { created_iso: string };

function toEvent(row: SelectedRow): EventRecord {
  return {
    id: String(row.id),
    type: row.type as EventType,
    subjectType: row.subject_type as SubjectType,
    subjectId: row.subject_id,
    ownerId: row.owner_id,
    data: row.data,
    createdAt: row.created_iso,
    ...(Array.isArray(row.actor) && row.actor.length > 0 ? { actor: row.actor } : {}),
  };
}

/** Inserts one event with the caller's transaction (never the base knex: PGlite has one connection). */
export async function recordEvent(trx: Db, event: NewEvent): Promise<void> {
  const actor = currentWriteActor();
  await trx('events').insert({
    ...(actor ? { actor: toJsonb(actor) } : {}),
    type: event.type,
    subject_type: event.subjectType,
    subject_id: event.subjectId,
    owner_id: event.ownerId,
    data: toJsonb(event.data ?? {}),
    ...(event.createdAt ? { created_at: event.createdAt } : {}),
  });
}

/** Deletes an account and writes `user.deleted` (owned by nobody: `users:*` sees it). */
export function withUserDeletedEvent(
  accounts: AccountsRepo,
  db: Db,
  create: (db: Db) => AccountsRepo,
): AccountsRepo {
  return {
    ...accounts,
    delete: (id) =>
      db.transaction(async (trx) => {
        const deleted = await create(trx).delete(id);
        if (deleted) {
          await recordEvent(trx, {
            type: 'user.deleted',
            subjectType: 'user',
            subjectId: id,
            ownerId: null,
            data: { id },
          });
        }
        return deleted;
      }),
  };
}

export function createEventsRepo(db: Db): EventsRepo {
  const select = () =>
    db<EventRow>('events').select(...COLUMNS, db.raw(`${ISO_US} as created_iso`));
  const visible = (visibility: EventVisibility) => {
    // The visibility condition is part of the SQL (BOLA), never a filter afterwards.
    return select().where((q) => {
      q.where('owner_id', visibility.ownerId);
      if (visibility.subjectTypes.length > 0) q.orWhereIn('subject_type', visibility.subjectTypes);
    });
  };

  async function xmin(): Promise<bigint> {
    const result = await db.raw('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin');
    return BigInt((result as { rows: { xmin: string }[] }).rows[0]!.xmin);
  }

  return {
    async list(visibility, { before, limit }) {
      const query = visible(visibility);
      if (before) {
        query.where((q) => {
          q.where('created_at', '<', before.at);
          if (before.id !== undefined)
            q.orWhere((eq) => eq.where('created_at', before.at).where('id', '<', before.id!));
        });
      }
      const rows = await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit);
      return (rows as unknown as SelectedRow[]).map(toEvent);
    },

    async listAfter(visibility, afterId, limit) {
      const rows = await visible(visibility).where('id', '>', afterId).orderBy('id').limit(limit);
      return (rows as unknown as SelectedRow[]).map(toEvent);
    },

    async tailStart() {
      // Every transaction below xmin has finished; a later one is still to be read.
      return { tx: String((await xmin()) - 1n), id: String(Number.MAX_SAFE_INTEGER) };
    },

    async tail(from, limit) {
      const horizon = await xmin();
      const rows = (await select()
        .whereRaw('(tx_id, id) > (?::bigint, ?::bigint)', [from.tx, from.id])
        .where('tx_id', '<', String(horizon))
        .orderBy([{ column: 'tx_id' }, { column: 'id' }])
        .limit(limit)) as unknown as SelectedRow[];
      const last = rows.at(-1);
      return {
        events: rows.map(toEvent),
        next: last ? { tx: String(last.tx_id), id: String(last.id) } : from,
      };
    },
  };
}
