/** The claims a deny-list decision reads; verified AccessTokenClaims fit. */
export interface DenyCheckInput {
  jti?: string | undefined;
  grant_id?: string | undefined;
  grantId?: string | undefined;
  sub?: string | undefined;
  iat?: number | undefined;
  /**
   * When the token's grant was created, Unix seconds with milliseconds. A logout
   * everywhere cuts off by it when present: `iat` has whole seconds only, and a token of a
   * grant from before the logout must not pass because it was minted after it.
   */
  grant_iat?: number | undefined;
}

/** A revocation as the deny list records it. Times are Unix seconds. */
export interface RevocationEntry {
  kind: 'jti' | 'grant' | 'subject';
  /** The token id, grant id or subject. */
  value: string;
  /** A logout's instant, with its milliseconds; null for tokens and grants. */
  before: number | null;
  expiresAt: number;
}

/** What was revoked: a token id (`jti`), a grant, or a subject's earlier tokens. */
export interface Revocation {
  kind: RevocationEntry['kind'];
  value: string;
}

/**
 * Revoked tokens, grants and subjects in memory, so `isDenied` costs a few Map lookups per
 * request. It holds no timer and does no I/O: whoever reads the revocations (in the apps,
 * createSharedDenyList of packages/db over the `revocations` table) feeds them to `apply`.
 * All times are Unix seconds; a logout's instant and an issue time may carry a fraction
 * (milliseconds), and are compared with it.
 */
export interface DenyList {
  /** Synchronous and in-memory: safe on every request. */
  isDenied(claims: DenyCheckInput): boolean;
  /**
   * Adds the entries, skipping expired ones, and returns those that deny something not
   * denied before (a new token or grant, a later logout), in order: feeds may apply an
   * entry more than once, and only news should reach listeners.
   */
  apply(entries: Iterable<RevocationEntry>): Revocation[];
  /** Drops expired entries. */
  prune(): void;
  /** Entries held (tokens, grants and subjects), for the `deny_list_entries` gauge. */
  size(): number;
}

export interface DenyListOptions {
  /** Milliseconds clock; Date.now by default. */
  now?: () => number;
}

/**
 * The rule of a subject revocation (logout everywhere at `before`): a token issued before
 * it is revoked, and so is one without `iat` (no proof it postdates the logout). Both are
 * compared with the precision they carry (milliseconds where known): an issue time in
 * whole seconds must be given as the start of its second, so that ambiguity revokes.
 */
export function predatesLogout(iat: number | undefined, before: number): boolean {
  return iat === undefined || iat < before;
}

/** Creates an empty in-memory deny list. */
export function createDenyList(options: DenyListOptions = {}): DenyList {
  const now = options.now ?? Date.now;
  const jtis = new Map<string, number>();
  const grants = new Map<string, number>();
  const subjects = new Map<string, { before: number; expiresAt: number }>();

  /** Adds the entry; true when it denies something the list did not deny already. */
  function add(e: RevocationEntry, nowSec: number): boolean {
    if (e.expiresAt <= nowSec) return false;
    if (e.kind === 'jti' || e.kind === 'grant') {
      const map = e.kind === 'jti' ? jtis : grants;
      const known = map.get(e.value);
      map.set(e.value, Math.max(known ?? 0, e.expiresAt));
      return known === undefined;
    }
    if (e.kind === 'subject' && e.before !== null) {
      const old = subjects.get(e.value);
      subjects.set(e.value, {
        before: Math.max(old?.before ?? 0, e.before),
        expiresAt: Math.max(old?.expiresAt ?? 0, e.expiresAt),
      });
      return old === undefined || e.before > old.before;
    }
    return false;
  }

  return {
    isDenied(c) {
      if (c.jti !== undefined && jtis.has(c.jti)) return true;
      const grantId = c.grant_id ?? c.grantId;
      if (grantId !== undefined && grants.has(grantId)) return true;
      if (c.sub !== undefined) {
        const s = subjects.get(c.sub);
        if (s && predatesLogout(c.grant_iat ?? c.iat, s.before)) return true;
      }
      return false;
    },
    apply(entries) {
      const nowSec = now() / 1000;
      const news: Revocation[] = [];
      for (const e of entries) if (add(e, nowSec)) news.push({ kind: e.kind, value: e.value });
      return news;
    },
    prune() {
      const nowSec = now() / 1000;
      for (const map of [jtis, grants])
        for (const [k, exp] of map) if (exp <= nowSec) map.delete(k);
      for (const [k, s] of subjects) if (s.expiresAt <= nowSec) subjects.delete(k);
    },
    size: () => jtis.size + grants.size + subjects.size,
  };
}
