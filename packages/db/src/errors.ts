/** PostgreSQL unique_violation (SQLSTATE 23505), as raised by pg and PGlite alike. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}

/**
 * A query got no answer within the client-side bound (DB_QUERY_TIMEOUT): the server is
 * frozen or cut off. Its connection has been closed, so its transaction cannot commit.
 */
export class QueryTimeoutError extends Error {
  override name = 'QueryTimeoutError';
  readonly code = 'QUERY_TIMEOUT';
  constructor(timeoutMs: number, cause?: unknown) {
    super(`the database did not answer within ${timeoutMs} ms`, { cause });
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'QUERY_TIMEOUT',
]);

/**
 * SQLSTATE 57014 (query_canceled, raised by statement_timeout) and 55P03
 * (lock_not_available, lock_timeout): the database is too slow or blocked right now.
 */
const BUSY_CODES = new Set(['57014', '55P03']);

/**
 * The database could not be reached or dropped the connection: knex gave up acquiring a
 * connection (KnexTimeoutError), the socket failed, pg timed out connecting, or the
 * server is shutting down (SQLSTATE class 08, 57P01-57P03), or a statement ran out of
 * time (statement_timeout on the server, QueryTimeoutError on the client). Callers
 * answer 503 and retry later; the pool reconnects by itself once the database is back.
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
    if (
      NETWORK_CODES.has(e.code) ||
      BUSY_CODES.has(e.code) ||
      e.code.startsWith('08') ||
      /^57P0[123]$/.test(e.code)
    ) {
      return true;
    }
  }
  if (
    typeof e.message === 'string' &&
    // node-postgres: the socket closed, no pool slot, no answer to a query or to the
    // connection's startup (`timeout expired`, a server that accepts but does not answer).
    /Connection terminated|timeout exceeded when trying to connect|Query read timeout|^timeout expired$/.test(
      e.message,
    )
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
