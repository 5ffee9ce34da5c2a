import DataLoader from 'dataloader';
import { isDatabaseUnavailable } from './errors.js';

// One statement per event-loop round (docs/performance.md "Mechanisms"); nothing cached. A rejected
// batch (atomic, so it changed nothing) reruns each key alone; a lost connection is not retried.
export function coalesced<K, V>(
  run: (keys: readonly K[]) => Promise<readonly V[]>,
): (key: K) => Promise<V> {
  const loader = new DataLoader<K, V>(
    async (keys) => {
      try {
        return await run(keys);
      } catch (err) {
        if (keys.length === 1 || !isRejectedStatement(err)) throw err;
        return Promise.all(
          keys.map((key) =>
            run([key]).then(
              ([value]) => value as V,
              (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
            ),
          ),
        );
      }
    },
    {
      cache: false,
      maxBatchSize: 200,
      batchScheduleFn: (send) => setImmediate(send),
    },
  );
  return (key) => loader.load(key);
}

/** An error PostgreSQL reported for a statement it did not carry out (pg and PGlite alike). */
function isRejectedStatement(error: unknown): boolean {
  const e = error as { severity?: unknown; code?: unknown } | null;
  return (
    typeof e?.severity === 'string' && typeof e.code === 'string' && !isDatabaseUnavailable(error)
  );
}
