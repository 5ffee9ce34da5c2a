/** pg returns count(*) as a string, PGlite as a number. */
export function toCount(value: unknown): number {
  const n = typeof value === 'string' ? Number.parseInt(value, 10) : Number(value);
  if (!Number.isSafeInteger(n)) throw new TypeError(`not a count: ${String(value)}`);
  return n;
}

/** pg would write a JS array as a PostgreSQL array: jsonb goes through this on both drivers. */
export function toJsonb(value: unknown): string {
  return JSON.stringify(value);
}

/** For caches that hand the same object to concurrent requests. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
