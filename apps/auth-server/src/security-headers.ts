import type { Context, Middleware } from 'koa';

/**
 * CSP of our HTML pages: no script at all, inline styles only, no framing (clickjacking
 * of the consent page), forms posting only to us and, when given, to the client's
 * redirect origins — browsers apply form-action to the redirect chain that ends at the
 * client's redirect_uri after a form POST.
 */
export function htmlHeaders(ctx: Pick<Context, 'set'>, formTargets: string[] = []): void {
  const formAction = ["'self'", ...formTargets].join(' ');
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
}

/** Headers every response gets. */
export const baseHeaders: Middleware = async function baseHeaders(ctx, next) {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  await next();
};
