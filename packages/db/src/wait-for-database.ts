import { StartupError } from '@portcullis/observability';
import type { Db } from './create-db.js';
import { isDatabaseUnavailable } from './errors.js';

const EX_UNAVAILABLE = 69;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

export interface WaitOptions {
  timeoutMs: number;
  description: string;
  logger: { warn(obj: object, msg?: string): void };
}

/** `ECONNREFUSED`, `57P03`, or the message: what the operator can search for. */
function reasonOf(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string') return e.code;
  return typeof e.message === 'string' && e.message ? e.message : String(error);
}

/** Retries an unreachable database with backoff until `timeoutMs`; other failures throw at once. */
export async function waitForDatabase(db: Db, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      await db.raw('select 1');
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StartupError(
          `the database (${options.description}) was still unreachable (${reasonOf(error)}) ` +
            `after DB_START_TIMEOUT (${options.timeoutMs / 1000} s): start it, check ` +
            `DATABASE_URL, or wait longer with a larger DB_START_TIMEOUT`,
          EX_UNAVAILABLE,
          { cause: error },
        );
      }
      const wait = Math.min(delay, left);
      options.logger.warn(
        { database: options.description, reason: reasonOf(error), attempt, retryInMs: wait },
        'waiting for the database',
      );
      await new Promise((r) => setTimeout(r, wait));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}
