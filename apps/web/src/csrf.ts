import type { Middleware } from 'koa';

export const CSRF_HEADER = 'X-Requested-With';
export const CSRF_HEADER_VALUE = 'portcullis-web';

/** CSRF defence of the /auth POSTs besides SameSite=Strict (apps/web/README.md#routes). */
export function requireSameOriginFetch(origin: string): Middleware {
  return async function sameOriginFetch(ctx, next) {
    const origins = ctx.get('Origin');
    const site = ctx.get('Sec-Fetch-Site');
    if (
      ctx.get(CSRF_HEADER) !== CSRF_HEADER_VALUE ||
      (origins && origins !== origin) ||
      (site && site !== 'same-origin')
    ) {
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 403;
      ctx.body = { error: 'forbidden_origin' };
      return;
    }
    await next();
  };
}
