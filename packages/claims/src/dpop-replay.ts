import type { DpopReplayStore } from './dpop.js';

export interface MemoryReplayStoreOptions {
  /**
   * Most remembered proofs. Default 500,000 (about 90 s of 5,000 DPoP requests a second).
   * When every entry is still live, claims fail (503) rather than forget one.
   */
  maxEntries?: number;
  /** Milliseconds clock. Default Date.now. */
  now?: () => number;
}

/**
 * Proof `jti`s of one instance. Behind a load balancer use a shared store (Redis), or a
 * proof refused here is accepted by the next instance.
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): DpopReplayStore {
  const maxEntries = options.maxEntries ?? 500_000;
  const now = options.now ?? Date.now;
  // Insertion order is nearly expiry order (every TTL is about the same window), so
  // expired entries are swept from the front.
  const expiries = new Map<string, number>();
  function sweep(at: number): void {
    for (const [key, expiresAt] of expiries) {
      if (expiresAt > at) break;
      expiries.delete(key);
    }
  }
  return {
    claim(key, ttlMs) {
      const at = now();
      sweep(at);
      const expiresAt = expiries.get(key);
      if (expiresAt !== undefined && expiresAt > at) return Promise.resolve(false);
      if (expiries.size >= maxEntries) {
        return Promise.reject(new Error('DPoP replay store full'));
      }
      expiries.delete(key);
      expiries.set(key, at + ttlMs);
      return Promise.resolve(true);
    },
  };
}
