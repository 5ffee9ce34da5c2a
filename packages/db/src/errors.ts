/** PostgreSQL unique_violation (SQLSTATE 23505), as raised by pg and PGlite alike. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/**
 * The database could not be reached or dropped the connection: knex gave up acquiring a
 * connection (KnexTimeoutError), the socket failed, pg timed out connecting, or the
 * server is shutting down (SQLSTATE class 08, 57P01-57P03). Callers answer 503 and retry
 * later; the pool reconnects by itself once the database is back.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const e = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (e.name === 'KnexTimeoutError') return true;
  if (typeof e.code === 'string') {
    if (NETWORK_CODES.has(e.code) || e.code.startsWith('08') || /^57P0[123]$/.test(e.code)) {
      return true;
    }
  }
  if (
    typeof e.message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect/.test(e.message)
  )
    return true;
  if (
    Array.isArray(e.errors) &&
    e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))
  ) {
    return true;
  }
  return isDatabaseUnavailable(e.cause, depth + 1);
}
