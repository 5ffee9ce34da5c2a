import { createHash } from 'node:crypto';

/**
 * Serializes refresh-token rotation per token. The authorization server treats a second
 * use of a rotated refresh token as theft and revokes the whole grant (docs/security.md), yet a
 * browser legitimately sends the same `rt` cookie twice: two tabs loading at once, or a
 * request that left before the previous response replaced the cookie. So requests
 * presenting the same token share one rotation, and for `graceMs` afterwards a late
 * request with the old token gets that same result instead of tripping reuse detection.
 *
 * The window is short and in this process only; a stolen cookie replayed at the
 * authorization server directly still trips reuse detection. Behind several BFF
 * instances, route a browser to one instance (sticky sessions) to keep the guarantee.
 */
export interface RefreshCoordinator<T> {
  run(refreshToken: string, rotate: () => Promise<T>): Promise<T>;
}

export function createRefreshCoordinator<T>(options: {
  graceMs: number;
  now?: () => number;
}): RefreshCoordinator<T> {
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, Promise<T>>();
  const recent = new Map<string, { result: T; until: number }>();

  function prune(at: number) {
    for (const [key, entry] of recent) if (entry.until <= at) recent.delete(key);
  }

  return {
    run(refreshToken, rotate) {
      // Keyed by a digest: the map never holds refresh tokens themselves.
      const key = createHash('sha256').update(refreshToken).digest('base64url');
      const at = now();
      prune(at);
      const done = recent.get(key);
      if (done) return Promise.resolve(done.result);
      const pending = inFlight.get(key);
      if (pending) return pending;
      const work = rotate().then((result) => {
        recent.set(key, { result, until: now() + options.graceMs });
        return result;
      });
      inFlight.set(key, work);
      void work.finally(() => inFlight.delete(key)).catch(() => {});
      return work;
    },
  };
}
