import type { AccessTokenClaims } from './claims.js';

/**
 * Verified tokens, so a repeated token costs a Map lookup instead of a signature check.
 * Only byte-identical tokens hit: a hit compares the whole compact string. Expiry and the
 * deny list are checked by the verifier on every hit, not here. Give each verifier its own
 * cache: an entry means "verified for that verifier's issuer and audience".
 */
export interface TokenCache {
  get(token: string): AccessTokenClaims | undefined;
  set(token: string, claims: AccessTokenClaims): void;
  delete(token: string): void;
  clear(): void;
  readonly size: number;
}

// Entries are found by the token's last characters (the end of its signature) and then
// compared whole: hashing an 800-character key per request cost more than the rest of the
// lookup. Two tokens sharing an end share a slot; the later one replaces the earlier.
const KEY_LENGTH = 32;

interface Entry {
  token: string;
  claims: AccessTokenClaims;
  /** When the entry was last put at the end of the eviction order. */
  seq: number;
}

const keyOf = (token: string) => token.slice(-KEY_LENGTH);

/**
 * A bounded, nearly LRU cache: the entry evicted is the one least recently inserted or
 * moved, and a hit moves its entry to the end only once it is in the older half. Moving
 * on every hit (Map delete + set) made V8 rehash the table again and again; this way a
 * token used at least once every `maxEntries / 2` insertions stays cached.
 */
export function createTokenCache(options: { maxEntries?: number } = {}): TokenCache {
  const maxEntries = options.maxEntries ?? 10_000;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError('maxEntries must be a positive integer');
  }
  const halfLife = Math.ceil(maxEntries / 2);
  const entries = new Map<string, Entry>();
  let seq = 0;
  const moveToEnd = (key: string, entry: Entry) => {
    entries.delete(key);
    entry.seq = ++seq;
    entries.set(key, entry);
  };
  return {
    get(token) {
      const key = keyOf(token);
      const entry = entries.get(key);
      if (entry === undefined || entry.token !== token) return undefined;
      if (seq - entry.seq >= halfLife) moveToEnd(key, entry);
      return entry.claims;
    },
    set(token, claims) {
      moveToEnd(keyOf(token), { token, claims, seq: 0 });
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
    },
    delete(token) {
      const key = keyOf(token);
      if (entries.get(key)?.token === token) entries.delete(key);
    },
    clear() {
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
