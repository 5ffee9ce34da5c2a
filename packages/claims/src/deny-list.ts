/** The claims a deny-list decision reads; verified AccessTokenClaims fit. */
export interface DenyCheckInput {
  jti?: string | undefined;
  grant_id?: string | undefined;
  grantId?: string | undefined;
  sub?: string | undefined;
  iat?: number | undefined;
  /** Grant creation, Unix seconds with ms: `iat` has whole seconds, too coarse for a logout cut-off. */
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

/** Revocations in memory, fed through `apply`; no timer, no I/O. Times are Unix seconds (with ms). */
export interface DenyList {
  /** Synchronous and in-memory: safe on every request. */
  isDenied(claims: DenyCheckInput): boolean;
  /** Adds unexpired entries; returns only the news, since feeds may apply an entry twice. */
  apply(entries: Iterable<RevocationEntry>): Revocation[];
  prune(): void;
  /** Entries held (tokens, grants and subjects), for the `deny_list_entries` gauge. */
  size(): number;
}

export interface DenyListOptions {
  /** Milliseconds clock; Date.now by default. */
  now?: () => number;
}

// No `iat` is no proof it postdates the logout; whole seconds count as the start of their second.
export function predatesLogout(iat: number | undefined, before: number): boolean {
  return iat === undefined || iat < before;
}

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
