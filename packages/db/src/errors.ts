/** PostgreSQL unique_violation (SQLSTATE 23505), as raised by pg and PGlite alike. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}

/** No answer within DB_QUERY_TIMEOUT; the connection is closed, so its transaction cannot commit. */
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

// query_canceled (statement_timeout) and lock_not_available (lock_timeout): busy right now.
const BUSY_CODES = new Set(['57014', '55P03']);

/** Unreachable, connection lost, or out of time: callers answer 503; the pool reconnects itself. */
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
    // node-postgres: socket closed, no pool slot, no answer to a query or to the startup.
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
