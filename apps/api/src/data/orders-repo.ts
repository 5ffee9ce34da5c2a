import { randomUUID } from 'node:crypto';
import {
  coalesced,
  createReadCache,
  prepared,
  toCount,
  toJsonb,
  type Db,
  type OrderRow,
} from '@portcullis/db';
import type { OrderStatus } from '../domain/order-status.js';
import { recordEvent, type EventType, type NewEvent } from './events-repo.js';

export interface OrderItem {
  sku: string;
  quantity: number;
}

export interface Order {
  id: string;
  userId: string;
  customer: string;
  status: OrderStatus;
  amount: number;
  currency: string;
  items?: OrderItem[];
  note?: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrderContent {
  customer: string;
  amount: number;
  currency: string;
  items?: OrderItem[] | null | undefined;
  note?: string | null | undefined;
}

/** Who may see what: `ownerId` set limits every query to that owner's orders. */
export interface Visibility {
  ownerId?: string | undefined;
}

export interface OrderFilter extends Visibility {
  statuses?: readonly OrderStatus[] | undefined;
  customer?: string | undefined;
  createdAfter?: string | undefined;
}

export interface OrdersRepo {
  list(
    filter: OrderFilter,
    page: { offset: number; limit: number },
  ): Promise<{ items: Order[]; total: number }>;
  find(id: string, visibility: Visibility): Promise<Order | undefined>;
  /** `find` that may answer from the read cache (plain GETs only; writes use `find`). */
  findRecent(id: string, visibility: Visibility): Promise<Order | undefined>;
  create(userId: string, content: OrderContent, now: Date): Promise<Order>;
  /** Applies `changes` only at `expectedVersion`, in one statement; undefined if another write won. */
  update(
    id: string,
    expectedVersion: number,
    changes: Partial<OrderContent> & { status?: OrderStatus },
    now: Date,
  ): Promise<Order | undefined>;
  delete(id: string, expectedVersion: number): Promise<boolean>;
}

function toOrder(row: OrderRow): Order {
  const order: Order = {
    id: row.id,
    userId: row.user_id,
    customer: row.customer,
    status: row.status as OrderStatus,
    amount: Number(row.amount),
    currency: row.currency,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.items !== null) order.items = row.items;
  if (row.note !== null) order.note = row.note;
  return order;
}

function contentColumns(changes: Partial<OrderContent>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (changes.customer !== undefined) out['customer'] = changes.customer;
  if (changes.amount !== undefined) out['amount'] = changes.amount;
  if (changes.currency !== undefined) out['currency'] = changes.currency;
  if (changes.items !== undefined)
    out['items'] = changes.items === null ? null : toJsonb(changes.items);
  if (changes.note !== undefined) out['note'] = changes.note;
  return out;
}

function orderEvent(type: EventType, order: Order): NewEvent {
  const data = {
    ...order,
    createdAt: order.createdAt.toISOString(),
    updatedAt: order.updatedAt.toISOString(),
  };
  return { type, subjectType: 'order', subjectId: order.id, ownerId: order.userId, data };
}

// Every column of OrderRow, named: a prepared statement must not select `*`.
const ORDER_COLUMNS = [
  'id',
  'user_id',
  'customer',
  'status',
  'amount',
  'currency',
  'items',
  'note',
  'version',
  'created_at',
  'updated_at',
]
  .map((column) => `o.${column}`)
  .join(', ');

interface FindKey {
  id: string;
  ownerId: string | null;
}

/** Single-order reads, coalesced; each key's owner condition stays in the SQL (BOLA). */
function batchedFinds(db: Db): (key: FindKey) => Promise<OrderRow | undefined> {
  return coalesced(async (keys: readonly FindKey[]) => {
    const { rows } = (await prepared(
      db,
      `select ${ORDER_COLUMNS}, k.n
       from unnest(?::text[], ?::text[]) with ordinality as k(id, owner, n)
       join orders o on o.id = k.id and (k.owner is null or o.user_id = k.owner)`,
      // knex's types know no nullable arrays.
      [keys.map((k) => k.id), keys.map((k) => k.ownerId) as string[]],
    )) as { rows: Array<OrderRow & { n: number | string | bigint }> };
    const byPosition = new Map(rows.map((row) => [Number(row.n), row]));
    return keys.map((_, i) => byPosition.get(i + 1));
  });
}

export interface OrdersRepoOptions {
  /** Read-cache lifetime in ms (default 1000; 0: off); other instances' writes show within it. */
  cacheMs?: number;
  /** Most orders cached at once, oldest dropped first. Default 1,000 (an order can hold ~15 kB). */
  maxCached?: number;
  now?: () => number;
}

export function createOrdersRepo(db: Db, options: OrdersRepoOptions = {}): OrdersRepo {
  const visible = (visibility: Visibility) => {
    const query = db<OrderRow>('orders');
    if (visibility.ownerId !== undefined) query.where('user_id', visibility.ownerId);
    return query;
  };
  const finds = batchedFinds(db);
  // One key per owner condition: a hit is what the owner-checked query answered (BOLA).
  const cache = createReadCache<Order>({
    ttlMs: options.cacheMs ?? 1000,
    maxGroups: options.maxCached ?? 1000,
    ...(options.now ? { now: options.now } : {}),
  });
  const find: OrdersRepo['find'] = async (id, visibility) => {
    // No stored id holds NUL, and PostgreSQL rejects it in text: not found, not an error.
    if (id.includes('\0')) return undefined;
    const row = await finds({ id, ownerId: visibility.ownerId ?? null });
    return row && toOrder(row);
  };

  return {
    async list(filter, { offset, limit }) {
      const filtered = () => {
        const query = visible(filter);
        if (filter.statuses?.length) query.whereIn('status', filter.statuses);
        if (filter.customer !== undefined) query.where('customer', filter.customer);
        if (filter.createdAfter !== undefined) {
          query.where('created_at', '>=', `${filter.createdAfter}T00:00:00Z`);
        }
        return query;
      };
      const rows = await filtered()
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .offset(offset)
        .limit(limit);
      const count = await filtered().count<{ count: unknown }[]>({ count: '*' }).first();
      return { items: rows.map(toOrder), total: toCount(count?.count ?? 0) };
    },

    find,
    findRecent: (id, visibility) =>
      cache.get(id, visibility.ownerId ?? '', () => find(id, visibility)),

    create(userId, content, now) {
      return db.transaction(async (trx) => {
        const [row] = await trx('orders')
          .insert({
            id: randomUUID(),
            user_id: userId,
            status: 'pending',
            version: 1,
            created_at: now,
            updated_at: now,
            ...contentColumns(content),
          })
          .returning('*');
        const order = toOrder(row as OrderRow);
        await recordEvent(trx, orderEvent('order.created', order));
        return order;
      });
    },

    update(id, expectedVersion, changes, now) {
      const columns = contentColumns(changes);
      if (changes.status !== undefined) columns['status'] = changes.status;
      return cache.write(id, () =>
        db.transaction(async (trx) => {
          const [row] = await trx('orders')
            .where({ id, version: expectedVersion })
            .update({ ...columns, version: trx.raw('version + 1'), updated_at: now })
            .returning('*');
          if (!row) return undefined;
          const order = toOrder(row as OrderRow);
          await recordEvent(
            trx,
            orderEvent(changes.status === 'cancelled' ? 'order.cancelled' : 'order.updated', order),
          );
          return order;
        }),
      );
    },

    delete(id, expectedVersion) {
      return cache.write(id, () =>
        db.transaction(async (trx) => {
          // returning() rather than the affected-row count: knex-pglite does not report one.
          const rows = await trx('orders')
            .where({ id, version: expectedVersion })
            .del()
            .returning(['id', 'user_id']);
          const [deleted] = rows as { id: string; user_id: string }[];
          if (deleted) {
            await recordEvent(trx, {
              type: 'order.deleted',
              subjectType: 'order',
              subjectId: deleted.id,
              ownerId: deleted.user_id,
              data: { id: deleted.id },
            });
          }
          return rows.length > 0;
        }),
      );
    },
  };
}
