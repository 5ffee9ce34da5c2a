import type { AccessTokenClaims } from './claims.js';
import { createLru } from './lru.js';

/** Verified tokens (byte-identical hits only); one cache per verifier, for its issuer and audience. */
export interface TokenCache {
  get(token: string): AccessTokenClaims | undefined;
  set(token: string, claims: AccessTokenClaims): void;
  delete(token: string): void;
  clear(): void;
  readonly size: number;
}

// Keyed by the token's last characters, then compared whole: hashing the whole token cost more.
const KEY_LENGTH = 32;

interface Entry {
  token: string;
  claims: AccessTokenClaims;
}

const keyOf = (token: string) => token.slice(-KEY_LENGTH);

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
