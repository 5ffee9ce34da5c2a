import type { AccessTokenClaims } from './claims.js';
import { createLru } from './lru.js';

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
}

const keyOf = (token: string) => token.slice(-KEY_LENGTH);

/**
 * A bounded, nearly LRU cache (lru.ts): a token used at least once every
 * `maxEntries / 2` new tokens stays cached.
 */
export function createTokenCache(options: { maxEntries?: number } = {}): TokenCache {
  const entries = createLru<string, Entry>(options.maxEntries ?? 10_000);
  return {
    get(token) {
      const entry = entries.get(keyOf(token));
      return entry?.token === token ? entry.claims : undefined;
    },
    set(token, claims) {
      entries.set(keyOf(token), { token, claims });
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
