import type { Context } from 'koa';

/** A code over its limit: Retry-After and a 429 page naming the wait; true when refused. */
export async function refusedOverLimit(
  ctx: Context,
  attempt: { retryAfter: number },
  render: (status: number, message: string) => unknown,
): Promise<boolean> {
  if (attempt.retryAfter <= 0) return false;
  ctx.set('Retry-After', String(attempt.retryAfter));
  await render(429, `Too many wrong codes. Try again in ${attempt.retryAfter} seconds.`);
  return true;
}
