import type { Context, Middleware } from 'koa';

/** CSP of our pages: no inline script, no framing, forms only to us or the client's redirects. */
export function htmlHeaders(
  ctx: Pick<Context, 'set'>,
  formTargets: string[] = [],
  options: { passkeyScript?: boolean } = {},
): void {
  const formAction = ["'self'", ...formTargets].join(' ');
  // A passkey page loads our one script file and may fetch from us; nothing else.
  const script = options.passkeyScript ? " script-src 'self'; connect-src 'self';" : '';
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none';${script} style-src 'unsafe-inline'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
}

const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]']);

/** Origins a form may lead to (CSP form-action); loopback on any port (RFC 8252 §7.3). */
export function httpOrigins(uris: readonly string[] = []): string[] {
  const origins = new Set<string>();
  for (const uri of uris) {
    const url = URL.parse(uri);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) continue;
    origins.add(url.origin);
    if (url.protocol === 'http:' && LOOPBACK_IPS.has(url.hostname)) {
      origins.add(`http://${url.hostname}:*`);
    }
  }
  return [...origins];
}

/** Headers every response gets. */
export const baseHeaders: Middleware = async function baseHeaders(ctx, next) {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  await next();
};
