import type { Middleware } from 'koa';

/** The header the SPA sends with every call to /auth/*; its value is fixed. */
export const CSRF_HEADER = 'X-Requested-With';
export const CSRF_HEADER_VALUE = 'portcullis-web';

/**
 * CSRF defence of the cookie-authenticated POSTs (/auth/refresh, /auth/logout). The `rt`
 * cookie is SameSite=Strict, so a cross-site page cannot send it; because a same-site
 * sibling (another port or subdomain) still could, the request must also:
 *  - carry `X-Requested-With: portcullis-web`, a header a form cannot set and a
 *    cross-origin fetch can set only after a CORS preflight this app never grants;
 *  - come from this origin when the browser says where it comes from (`Origin`,
 *    `Sec-Fetch-Site`).
 */
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
