import { toJsonb, type Db } from '@portcullis/db';

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
  delete(id: string): Promise<boolean>;
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

export function createClientsRepo(db: Db): ClientsRepo {
  return {
    async put(id, metadata) {
      await db('clients')
        .insert({ id, metadata: toJsonb({ ...metadata, client_id: id }) })
        .onConflict('id')
        .merge(['metadata']);
    },
    async insert(metadata) {
      const [row] = await db('clients')
        .insert({ id: metadata.client_id, metadata: toJsonb(metadata) })
        .returning('*');
      return toRecord(row as ClientRow);
    },
    async findMetadata(id) {
      const row = await db<ClientRow>('clients').where({ id }).first();
      return row?.metadata;
    },
    async list() {
      return (await db<ClientRow>('clients').orderBy('created_at').orderBy('id')).map(toRecord);
    },
    async delete(id) {
      return (await db('clients').where({ id }).del().returning('id')).length > 0;
    },
  };
}
