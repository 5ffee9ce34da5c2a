import type { Middleware } from 'koa';

/**
 * Headers every response carries. The API only serves JSON, so nothing may load or
 * frame it. `no-store` is the default; cacheable single-resource GETs replace it.
 */
export function securityHeaders(options: { hsts: boolean }): Middleware {
  return async function setSecurityHeaders(ctx, next) {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Cross-Origin-Resource-Policy', 'same-site');
    ctx.set('Cache-Control', 'no-store');
    if (options.hsts) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    await next();
  };
}
