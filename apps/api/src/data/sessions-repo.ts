import type { Db, SessionRow } from '@portcullis/db';
import { newSecret, sha256Hex } from '../auth/secrets.js';

export interface Session {
  /** {@link sessionId}: names the session in the deny list, never the cookie value. */
  id: string;
  userId: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

/** Server-side browser sessions; only the SHA-256 of the cookie value reaches the database. */
export interface SessionsRepo {
  create(input: {
    userId: string;
    userAgent?: string | undefined;
    now: Date;
    expiresAt: Date;
  }): Promise<string>;
  /** The session when it exists, is not revoked, `expiresAt > now` and `lastSeenAt > idleSince`. */
  findActive(sid: string, now: Date, idleSince: Date): Promise<Session | undefined>;
  /** Moves last_seen_at to `now` when older than `staleBefore`: a write a minute, not a request. */
  touch(sid: string, now: Date, staleBefore: Date): Promise<void>;
  revoke(sid: string, now: Date): Promise<boolean>;
  revokeAllForUser(userId: string, now: Date): Promise<number>;
  /** Ends the user's open sessions whose start `ended` says is cut off; returns how many. */
  revokeWhere(userId: string, ended: (createdAt: Date) => boolean, now: Date): Promise<number>;
  /** Deletes the user's ended sessions, at most once a minute (the statement reads them all). */
  purgeEnded(userId: string, now: Date, idleSince: Date): Promise<void>;
}

const PURGE_EVERY_MS = 60_000;
// Users whose last purge is remembered; one forgotten may be purged again sooner (harmless).
const PURGES_REMEMBERED = 10_000;

/** A session's id: the SHA-256 of its cookie value, which is all the database holds. */
export const sessionId = (sid: string): string => sha256Hex(sid);

const toSession = (row: SessionRow): Session => ({
  id: row.id_hash,
  userId: row.user_id,
  createdAt: row.created_at,
  lastSeenAt: row.last_seen_at,
  expiresAt: row.expires_at,
});

export function createSessionsRepo(db: Db): SessionsRepo {
  const lastPurge = new Map<string, number>();
  const open = (sid: string) =>
    db<SessionRow>('sessions').where('id_hash', sessionId(sid)).whereNull('revoked_at');

  return {
    async create({ userId, userAgent, now, expiresAt }) {
      const sid = newSecret();
      await db('sessions').insert({
        id_hash: sessionId(sid),
        user_id: userId,
        created_at: now,
        last_seen_at: now,
        expires_at: expiresAt,
        user_agent: userAgent ? userAgent.slice(0, 512) : null,
      });
      return sid;
    },

    async findActive(sid, now, idleSince) {
      const row = await open(sid)
        .andWhere('expires_at', '>', now)
        .andWhere('last_seen_at', '>', idleSince)
        .first();
      return row && toSession(row);
    },

    async touch(sid, now, staleBefore) {
      await open(sid).andWhere('last_seen_at', '<', staleBefore).update({ last_seen_at: now });
    },

    async revoke(sid, now) {
      return (await open(sid).update({ revoked_at: now }).returning('id_hash')).length > 0;
    },

    async revokeAllForUser(userId, now) {
      const rows = await db('sessions')
        .where('user_id', userId)
        .whereNull('revoked_at')
        .update({ revoked_at: now })
        .returning('id_hash');
      return rows.length;
    },

    async revokeWhere(userId, ended, now) {
      const open = await db<SessionRow>('sessions')
        .where('user_id', userId)
        .whereNull('revoked_at')
        .select('id_hash', 'created_at');
      const ids = open.filter((row) => ended(row.created_at)).map((row) => row.id_hash);
      if (ids.length === 0) return 0;
      const rows = await db('sessions')
        .whereIn('id_hash', ids)
        .whereNull('revoked_at')
        .update({ revoked_at: now })
        .returning('id_hash');
      return rows.length;
    },

    async purgeEnded(userId, now, idleSince) {
      const at = now.getTime();
      const last = lastPurge.get(userId);
      if (last !== undefined && at >= last && at - last < PURGE_EVERY_MS) return;
      lastPurge.delete(userId);
      lastPurge.set(userId, at);
      if (lastPurge.size > PURGES_REMEMBERED) lastPurge.delete(lastPurge.keys().next().value!);
      await db('sessions')
        .where('user_id', userId)
        .andWhere((q) =>
          q
            .whereNotNull('revoked_at')
            .orWhere('expires_at', '<=', now)
            .orWhere('last_seen_at', '<=', idleSince),
        )
        .del();
    },
  };
}
