import { createReadCache, toJsonb, type Db } from '@portcullis/db';
import { containsNul } from '@portcullis/observability';

/** RFC 7591 client metadata as stored; `client_secret` holds the SHA-256 hex of the secret. */
export type ClientMetadata = Record<string, unknown> & { client_id: string };

export interface ClientRecord {
  metadata: ClientMetadata;
  createdAt: Date;
}

export interface ClientsRepo {
  put(id: string, metadata: Record<string, unknown>): Promise<void>;
  /** Fails with a unique violation when the id exists. */
  insert(metadata: ClientMetadata): Promise<ClientRecord>;
  findMetadata(id: string): Promise<ClientMetadata | undefined>;
  list(): Promise<ClientRecord[]>;
  /** One stored client, read now (administration); undefined when absent. */
  get(id: string): Promise<ClientRecord | undefined>;
  delete(id: string): Promise<boolean>;
}

export interface ClientsRepoOptions {
  /** Milliseconds a client read by `findMetadata` is reused (0: never), for others' writes too. */
  cacheMs?: number;
  now?: () => number;
}

interface ClientRow {
  id: string;
  metadata: ClientMetadata;
  created_at: Date;
}

const toRecord = (row: ClientRow): ClientRecord => ({
  metadata: row.metadata,
  createdAt: row.created_at,
});

/** The `clients` table; reads cached briefly and frozen (shared), unknown ids never cached. */
export function createClientsRepo(db: Db, options: ClientsRepoOptions = {}): ClientsRepo {
  const cache = createReadCache<ClientMetadata>({
    ttlMs: options.cacheMs ?? 1000,
    maxGroups: 10_000,
    ...(options.now ? { now: options.now } : {}),
  });
  const write = cache.write;

  return {
    async put(id, metadata) {
      await write(id, () =>
        db('clients')
          .insert({ id, metadata: toJsonb({ ...metadata, client_id: id }) })
          .onConflict('id')
          .merge(['metadata']),
      );
    },
    async insert(metadata) {
      const [row] = await write(metadata.client_id, () =>
        db('clients')
          .insert({ id: metadata.client_id, metadata: toJsonb(metadata) })
          .returning('*'),
      );
      return toRecord(row as ClientRow);
    },
    findMetadata(id) {
      // PostgreSQL cannot store a NUL in text: no client has one in its id (README "Bad input").
      if (containsNul(id)) return Promise.resolve(undefined);
      return cache.get(id, '', async () => {
        const row = await db<ClientRow>('clients').where({ id }).first();
        return row?.metadata;
      });
    },
    async list() {
      return (await db<ClientRow>('clients').orderBy('created_at').orderBy('id')).map(toRecord);
    },
    async get(id) {
      if (containsNul(id)) return undefined;
      const row = await db<ClientRow>('clients').where({ id }).first();
      return row && toRecord(row);
    },
    async delete(id) {
      const deleted = await write(id, () => db('clients').where({ id }).del().returning('id'));
      return deleted.length > 0;
    },
  };
}
