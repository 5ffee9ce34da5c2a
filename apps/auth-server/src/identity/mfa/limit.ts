import type { Context } from 'koa';
import { translated, type SafeHtml } from '../ui/html.js';
import type { Ui } from '../ui/index.js';

/** A code over its limit: Retry-After and a 429 page naming the wait; true when refused. */
export async function refusedOverLimit(
  ctx: Context,
  attempt: { retryAfter: number },
  ui: Pick<Ui, 't'>,
  render: (status: number, message: SafeHtml) => unknown,
): Promise<boolean> {
  if (attempt.retryAfter <= 0) return false;
  ctx.set('Retry-After', String(attempt.retryAfter));
  await render(429, translated(ui.t)('mfa:tooManyCodes', { seconds: attempt.retryAfter }));
  return true;
}
