import type { DpopReplayStore } from './dpop.js';

export interface MemoryReplayStoreOptions {
  /** Default 500,000; when every entry is live, claims fail (503) rather than forget one. */
  maxEntries?: number;
  /** Once half full, an owner holding this many live entries gets no more. Default maxEntries / 100. */
  maxEntriesPerOwner?: number;
  now?: () => number;
}

/** One instance's proof `jti`s; several instances need a shared store, or a replay passes elsewhere. */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): DpopReplayStore {
  const maxEntries = options.maxEntries ?? 500_000;
  const perOwner = options.maxEntriesPerOwner ?? Math.max(1, Math.floor(maxEntries / 100));
  const busy = Math.ceil(maxEntries / 2);
  const now = options.now ?? Date.now;
  // Insertion order is nearly expiry order (every TTL about the same), so sweep from the front.
  const expiries = new Map<string, number>();
  const held = new Map<string, number>();
  const release = (key: string) => {
    const owner = key.slice(0, key.indexOf(':'));
    const count = held.get(owner)! - 1;
    if (count === 0) held.delete(owner);
    else held.set(owner, count);
  };
  function sweep(at: number): void {
    for (const [key, expiresAt] of expiries) {
      if (expiresAt > at) break;
      expiries.delete(key);
      release(key);
    }
  }
  return {
    claim(owner, id, ttlMs) {
      const at = now();
      sweep(at);
      const key = `${owner}:${id}`;
      const expiresAt = expiries.get(key);
      if (expiresAt !== undefined) {
        if (expiresAt > at) return Promise.resolve(false);
        expiries.delete(key);
        release(key);
      }
      if (expiries.size >= maxEntries) {
        return Promise.reject(new Error('DPoP replay store full'));
      }
      const count = held.get(owner) ?? 0;
      if (count >= perOwner && expiries.size >= busy) {
        return Promise.reject(new Error('DPoP replay store: this key holds its share'));
      }
      held.set(owner, count + 1);
      expiries.set(key, at + ttlMs);
      return Promise.resolve(true);
    },
  };
}
