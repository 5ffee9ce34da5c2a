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
