import type { Context, Middleware } from 'koa';

/**
 * CSP of our HTML pages: no script (a page with a passkey form: our one script file), inline
 * styles only, no framing (clickjacking of the consent page), forms posting only to us
 * and, when given, to the client's redirect origins — browsers apply form-action to the
 * redirect chain that ends at the client's redirect_uri after a form POST.
 */
export function htmlHeaders(
  ctx: Pick<Context, 'set'>,
  formTargets: string[] = [],
  options: { passkeyScript?: boolean } = {},
): void {
  const formAction = ["'self'", ...formTargets].join(' ');
  // A page with a passkey form loads our one script file and lets it fetch from us
  // (README "Passkeys"); still no inline script, no other origin.
  const script = options.passkeyScript ? " script-src 'self'; connect-src 'self';" : '';
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none';${script} style-src 'unsafe-inline'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
}

const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]']);

/**
 * The http(s) origins of some URIs: where a form of ours may lead (CSP form-action). A
 * loopback IP literal's redirect takes any port at /authorize (RFC 8252 §7.3), so its
 * origin is that host on any port; a browser would otherwise refuse the redirect to it.
 */
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
