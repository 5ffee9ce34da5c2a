/**
 * In-memory validator cache for GETs (RFC 9110 §13.1.2 If-None-Match). Entries are keyed
 * by credential identity and URL, so one client switching users never serves user A's
 * copy to user B. Memory only: cached bodies may be personal data.
 */

/** A stored response: its strong validator and decoded body. */
export interface CachedResponse {
  etag: string;
  body: unknown;
}

/** Pluggable cache used by the client for conditional GETs. */
export interface EtagCache {
  get(key: string): CachedResponse | undefined;
  set(key: string, value: CachedResponse): void;
  /** Drops every entry whose URL (any identity) equals `url`. */
  invalidateUrl(url: string): void;
  clear(): void;
}

/** Least-recently-used cache bounded to `maxEntries` (default 500). */
export function createEtagCache(maxEntries = 500): EtagCache {
  const entries = new Map<string, CachedResponse>();
  return {
    get(key) {
      const hit = entries.get(key);
      if (hit) {
        // Map keeps insertion order: re-inserting marks the entry most recently used.
        entries.delete(key);
        entries.set(key, hit);
      }
      return hit;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        entries.delete(oldest.value);
      }
    },
    invalidateUrl(url) {
      for (const key of entries.keys()) {
        if (key.endsWith(` ${url}`)) entries.delete(key);
      }
    },
    clear() {
      entries.clear();
    },
  };
}

/** Cache key: identity of the credential, a space, then the absolute URL. */
export function cacheKey(identity: string, url: string): string {
  return `${identity} ${url}`;
}

/**
 * Identity of an access token for cache partitioning: `sub` + `client_id` of a JWT
 * (read without verification — only to separate cache entries, never to trust), so
 * a rotated token of the same subject keeps its cache; the raw value otherwise
 * (API keys, opaque tokens). Anonymous requests share the identity "-".
 */
export function tokenIdentity(token: string | undefined): string {
  if (!token) return '-';
  const parts = token.split('.');
  if (parts.length === 3 && parts[1]) {
    try {
      const json = atob(parts[1].replace(/-/g, '+').replace(/_/g, '/'));
      const claims = JSON.parse(json) as { sub?: unknown; client_id?: unknown };
      if (typeof claims.sub === 'string')
        return `jwt:${claims.sub}:${String(claims.client_id ?? '')}`;
    } catch {
      // Not a JWT after all: fall through to the raw value.
    }
  }
  return `tok:${token}`;
}
