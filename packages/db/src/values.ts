/**
 * pg returns count(*) as a string (bigint), PGlite as a number: read counts through this.
 */
export function toCount(value: unknown): number {
  const n = typeof value === 'string' ? Number.parseInt(value, 10) : Number(value);
  if (!Number.isSafeInteger(n)) throw new TypeError(`not a count: ${String(value)}`);
  return n;
}

/**
 * pg serialises a JS array as a PostgreSQL array, not JSON: every jsonb value is written
 * through this so arrays and objects land as JSON on both drivers.
 */
export function toJsonb(value: unknown): string {
  return JSON.stringify(value);
}

/**
 * Freezes a value read from the database and everything in it, for caches that hand the
 * same object to concurrent requests.
 */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
