/** PostgreSQL unique_violation (SQLSTATE 23505), as raised by pg and PGlite alike. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}
