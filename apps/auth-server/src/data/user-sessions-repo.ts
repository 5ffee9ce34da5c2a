import type { Db } from '@portcullis/db';
import { revokeGrantRows } from './oidc-adapter.js';

/** A browser's sign-in; `uid` names it (its `id` is the cookie value and never leaves here). */
export interface UserSession {
  uid: string;
  signedInAt: Date | null;
  expiresAt: Date | null;
  /** How the user signed in (RFC 8176 amr). */
  amr: string[];
  /** The clients signed in through this session. */
  clientIds: string[];
}

/** What a user let one client do (oidc-provider's Grant): its tokens hang off it. */
export interface UserGrant {
  id: string;
  clientId: string;
  /** Scopes granted: OpenID ones and each resource's. */
  scopes: string[];
  createdAt: Date | null;
  expiresAt: Date | null;
}

/** A user's live sessions and grants in oidc-provider's storage (README "Your account"). */
export interface UserSessionsRepo {
  sessions(userId: string): Promise<UserSession[]>;
  grants(userId: string): Promise<UserGrant[]>;
  /** Deletes the session; returns the grants signed in through it (to revoke), or undefined. */
  endSession(userId: string, uid: string): Promise<{ grantIds: string[] } | undefined>;
  /** Deletes the grant and every token of it; false when it is not the user's. */
  revokeGrant(userId: string, grantId: string): Promise<boolean>;
}

interface Row {
  id: string;
  payload: Record<string, unknown>;
  expires_at: Date | null;
  issued_at: Date | null;
}

/** Live: unexpired, and not cut off by a logout everywhere (the adapter's guard refuses those). */
const LIVE = `(p.expires_at is null or p.expires_at > now())
  and not exists (select 1 from revocations r where r.kind = 'subject' and r.value = ?
    and r.expires_at > now()
    and coalesce(extract(epoch from p.issued_at) * 1000,
      (p.payload->>'loginTs')::float8 * 1000, 0) < r.issued_before)`;

const strings = (value: unknown) =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

function scopesOf(payload: Record<string, unknown>): string[] {
  const openid = (payload['openid'] as { scope?: unknown } | undefined)?.scope;
  const resources = Object.values((payload['resources'] as Record<string, unknown>) ?? {});
  const all = [openid, ...resources].filter((s): s is string => typeof s === 'string');
  return [...new Set(all.flatMap((s) => s.split(' ').filter(Boolean)))];
}

const authorizationsOf = (payload: Record<string, unknown>) =>
  (payload['authorizations'] as Record<string, { grantId?: unknown }> | undefined) ?? {};

export function createUserSessionsRepo(db: Db): UserSessionsRepo {
  const rowsOf = (type: 'Session' | 'Grant', userId: string) =>
    db('oidc_payloads as p')
      .select<Row[]>('p.id', 'p.payload', 'p.expires_at', 'p.issued_at')
      .where('p.type', type)
      .whereRaw(`p.payload->>'accountId' = ?`, [userId])
      .whereRaw(LIVE, [userId])
      .orderBy('p.issued_at', 'desc');

  return {
    async sessions(userId) {
      return (await rowsOf('Session', userId)).map((row) => {
        const loginTs = row.payload['loginTs'];
        return {
          uid: String(row.payload['uid']),
          signedInAt: typeof loginTs === 'number' ? new Date(loginTs * 1000) : row.issued_at,
          expiresAt: row.expires_at,
          amr: strings(row.payload['amr']),
          clientIds: Object.keys(authorizationsOf(row.payload)),
        };
      });
    },

    async grants(userId) {
      return (await rowsOf('Grant', userId)).map((row) => ({
        id: row.id,
        clientId: String(row.payload['clientId']),
        scopes: scopesOf(row.payload),
        createdAt: row.issued_at,
        expiresAt: row.expires_at,
      }));
    },

    async endSession(userId, uid) {
      const row = await db('oidc_payloads')
        .where({ type: 'Session', uid })
        .whereRaw(`payload->>'accountId' = ?`, [userId])
        .first<{ id: string; payload: Record<string, unknown> } | undefined>('id', 'payload');
      if (!row) return undefined;
      await db('oidc_payloads').where({ type: 'Session', id: row.id }).del();
      const grantIds = Object.values(authorizationsOf(row.payload))
        .map((a) => a.grantId)
        .filter((g): g is string => typeof g === 'string');
      for (const grantId of grantIds) await revokeGrantRows(db, grantId);
      return { grantIds };
    },

    async revokeGrant(userId, grantId) {
      const row = await db('oidc_payloads')
        .where({ type: 'Grant', id: grantId })
        .whereRaw(`payload->>'accountId' = ?`, [userId])
        .first<{ id: string } | undefined>('id');
      if (!row) return false;
      await revokeGrantRows(db, grantId);
      return true;
    },
  };
}
