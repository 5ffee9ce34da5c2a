import type { AccessTokenClaims } from './claims.js';

/**
 * Verified tokens keyed by the whole compact token string, so a repeated token costs a
 * Map lookup instead of a signature check. Only byte-identical tokens hit: a changed
 * signature or payload is a different key. Expiry and the deny list are checked by the
 * verifier on every hit, not here. Give each verifier its own cache: an entry means
 * "verified for that verifier's issuer and audience".
 */
export interface TokenCache {
  get(token: string): AccessTokenClaims | undefined;
  set(token: string, claims: AccessTokenClaims): void;
  delete(token: string): void;
  clear(): void;
  readonly size: number;
}

/** A bounded LRU (Map insertion order: re-inserting on a hit moves an entry to the end). */
export function createTokenCache(options: { maxEntries?: number } = {}): TokenCache {
  const maxEntries = options.maxEntries ?? 10_000;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError('maxEntries must be a positive integer');
  }
  const entries = new Map<string, AccessTokenClaims>();
  return {
    get(token) {
      const claims = entries.get(token);
      if (claims !== undefined) {
        entries.delete(token);
        entries.set(token, claims);
      }
      return claims;
    },
    set(token, claims) {
      entries.delete(token);
      entries.set(token, claims);
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
    },
    delete(token) {
      entries.delete(token);
    },
    clear() {
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
