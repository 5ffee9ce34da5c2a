// Full jitter (random(0, min(cap, base * 2^n))) so clients refused together do not return together.

/** Sleeps `ms`; rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryOptions {
  /** Retries after the first attempt (so at most `maxRetries + 1` requests). Default 3. */
  maxRetries?: number;
  /** Base of the exponential backoff, in ms. Default 300. */
  baseDelayMs?: number;
  /** Longest single wait, ms. Default 30000; a longer Retry-After is thrown, not shortened. */
  maxDelayMs?: number;
  /** Source of randomness in [0, 1) for the jitter; injectable for tests. */
  random?: () => number;
  sleep?: Sleep;
}

export type ResolvedRetry = Required<RetryOptions>;

export function resolveRetry(options: RetryOptions | undefined): ResolvedRetry {
  return {
    maxRetries: options?.maxRetries ?? 3,
    baseDelayMs: options?.baseDelayMs ?? 300,
    maxDelayMs: options?.maxDelayMs ?? 30_000,
    random: options?.random ?? Math.random,
    sleep: options?.sleep ?? sleep,
  };
}

/** Full-jitter exponential delay for retry number `retry` (0-based). */
export function backoffDelay(
  retry: number,
  policy: Pick<ResolvedRetry, 'baseDelayMs' | 'maxDelayMs' | 'random'>,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(policy.random() * ceiling);
}

/** Retry-After (RFC 9110 §10.2.3) in ms; undefined when absent or unparseable. */
export function parseRetryAfter(
  value: string | null,
  now: number = Date.now(),
): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
