import type { Middleware } from 'koa';

/**
 * Headers every response carries. The API only serves JSON, so nothing may load or
 * frame it. `no-store` is the default; cacheable single-resource GETs replace it.
 */
export function securityHeaders(options: { hsts: boolean }): Middleware {
  const headers: Array<[string, string]> = [
    ['X-Content-Type-Options', 'nosniff'],
    ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
    ['Referrer-Policy', 'no-referrer'],
    ['X-Frame-Options', 'DENY'],
    ['Cross-Origin-Resource-Policy', 'same-site'],
    ['Cache-Control', 'no-store'],
  ];
  if (options.hsts)
    headers.push(['Strict-Transport-Security', 'max-age=31536000; includeSubDomains']);
  // Set on the node response at once: constant, valid values need none of Koa's per-call
  // checks, and this runs on every request.
  return async function setSecurityHeaders(ctx, next) {
    const res = ctx.res;
    for (const [name, value] of headers) res.setHeader(name, value);
    await next();
  };
}
