import type { Middleware } from 'koa';

/** Strict CSP: the access token is in a JS variable, so script injection is the threat that matters. */
export function securityHeaders(options: { apiOrigin: string; hsts: boolean }): Middleware {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${options.apiOrigin}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return async function setSecurityHeaders(ctx, next) {
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
    if (options.hsts) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    await next();
  };
}
