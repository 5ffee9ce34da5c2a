import type { Context } from 'koa';

/**
 * A second-factor code over its limit (README "Multi-factor sign-in"): Retry-After, and the
 * page `render` draws with a 429 naming the wait. True when the attempt was refused.
 */
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
