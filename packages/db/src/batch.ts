import DataLoader from 'dataloader';
import { isDatabaseUnavailable } from './errors.js';

/**
 * Calls made while the event loop handles one round of I/O, run as one statement once that
 * round is over (setImmediate, so an idle server adds no wait). Under load that is one
 * round trip, one socket write and one statement for many requests: on a small machine the
 * per-statement cost, not the work, is what PostgreSQL and the pg client spend most on.
 *
 * `run` gets the keys in call order, duplicates included, and answers one value per key
 * in the same order. Nothing is cached: every call is answered by a statement that started
 * after it was made, so a caller sees every write that finished before its call.
 *
 * One caller's bad key must not fail the others: when PostgreSQL rejects the batched
 * statement (a statement is atomic, so it changed nothing), each key runs again on its own
 * and only the keys that fail alone see an error. A lost connection is not retried: the
 * statement may have been carried out, and every caller sees that error as before.
 */
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
