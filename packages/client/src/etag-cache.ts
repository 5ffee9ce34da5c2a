// Keyed by credential identity and URL, so user B never gets user A's copy; memory only (personal data).

export interface CachedResponse {
  etag: string;
  body: unknown;
}

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

export function cacheKey(identity: string, url: string): string {
  return `${identity} ${url}`;
}

/** `sub` + `client_id` of a JWT, read unverified only to separate entries; else the raw value, or "-". */
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
