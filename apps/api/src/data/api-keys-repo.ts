import { randomUUID } from 'node:crypto';
import { toJsonb, type ApiKeyRow, type Db } from '@portcullis/db';
import { API_KEY_PREFIX } from '@portcullis/claims';
import { newSecret, sha256Hex } from '../auth/secrets.js';

/** An API key record; the key itself exists only in the creation response. */
export interface ApiKey {
  id: string;
  ownerId: string;
  name: string;
  permissions: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revoked: boolean;
  revokedAt: Date | null;
  /** Requests per rate-limit window; null means the configured default. */
  rateLimit: number | null;
}

export interface NewApiKey {
  ownerId: string;
  name: string;
  permissions: string[];
  rateLimit?: number | null | undefined;
  now: Date;
}

export interface ApiKeysRepo {
  /** Stores the key's SHA-256 hex and returns the record and the key (`sk_live_` + 43 chars). */
  create(input: NewApiKey): Promise<{ apiKey: ApiKey; key: string }>;
  /** Hashes the presented key and looks up a non-revoked record (docs/api-contracts.md "Credentials"). */
  findActiveByKey(key: string): Promise<ApiKey | undefined>;
  findForOwner(id: string, ownerId: string): Promise<ApiKey | undefined>;
  listByOwner(
    ownerId: string,
    page: { after?: string | undefined; limit: number },
  ): Promise<ApiKey[]>;
  /** Revokes the owner's key (idempotent); false when the owner has no such key. */
  revoke(id: string, ownerId: string, now: Date): Promise<boolean>;
  /** Moves last_used_at to `now` when older than `staleBefore`. */
  touch(id: string, now: Date, staleBefore: Date): Promise<void>;
}

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  ownerId: row.owner_id,
  name: row.name,
  permissions: row.permissions,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revoked: row.revoked,
  revokedAt: row.revoked_at,
  rateLimit: row.rate_limit,
});

export function createApiKeysRepo(db: Db): ApiKeysRepo {
  return {
    async create({ ownerId, name, permissions, rateLimit, now }) {
      const key = `${API_KEY_PREFIX}${newSecret()}`;
      const [row] = await db('api_keys')
        .insert({
          id: randomUUID(),
          owner_id: ownerId,
          name,
          hash: sha256Hex(key),
          permissions: toJsonb(permissions),
          created_at: now,
          rate_limit: rateLimit ?? null,
        })
        .returning('*');
      return { apiKey: toApiKey(row as ApiKeyRow), key };
    },

    async findActiveByKey(key) {
      const row = await db<ApiKeyRow>('api_keys')
        .where({ hash: sha256Hex(key), revoked: false })
        .first();
      return row && toApiKey(row);
    },

    async findForOwner(id, ownerId) {
      const row = await db<ApiKeyRow>('api_keys').where({ id, owner_id: ownerId }).first();
      return row && toApiKey(row);
    },

    async listByOwner(ownerId, { after, limit }) {
      const query = db<ApiKeyRow>('api_keys').where('owner_id', ownerId).orderBy('id').limit(limit);
      if (after) query.andWhere('id', '>', after);
      return (await query).map(toApiKey);
    },

    async revoke(id, ownerId, now) {
      const rows = await db('api_keys')
        .where({ id, owner_id: ownerId })
        .update({ revoked: true, revoked_at: db.raw('coalesce(revoked_at, ?)', [now]) })
        .returning('id');
      return rows.length > 0;
    },

    async touch(id, now, staleBefore) {
      await db('api_keys')
        .where({ id, revoked: false })
        .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', staleBefore))
        .update({ last_used_at: now });
    },
  };
}
