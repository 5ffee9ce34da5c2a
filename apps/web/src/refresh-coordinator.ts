import { createHash } from 'node:crypto';

/** One rotation per refresh token, its result shared for `graceMs` (apps/web/README.md#routes). */
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
