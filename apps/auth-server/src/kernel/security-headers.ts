import type { Context, Middleware } from 'koa';
import type { Brand } from './ui-settings.js';

/** What the headers need of a page's Ui (identity/ui): its brand. */
type Branded = { brand: Brand };

/** The origin of an https logo (BRAND_LOGO_URL), which the pages' img-src must allow. */
function logoOrigin(ui: Branded | undefined): string | undefined {
  const url = ui?.brand.logoUrl ? URL.parse(ui.brand.logoUrl) : null;
  return url?.protocol === 'https:' ? url.origin : undefined;
}

/**
 * CSP of our pages: no inline script, no framing, forms only to us or the client's redirects,
 * images from us and the brand's logo origin (`ui`: the page's Ui, see page() in identity/interactions/views.ts).
 */
export function htmlHeaders(
  ctx: Pick<Context, 'set'>,
  formTargets: string[] = [],
  options: { passkeyScript?: boolean; ui?: Branded | undefined } = {},
): void {
  const formAction = ["'self'", ...formTargets].join(' ');
  // A passkey page loads our one script file and may fetch from us; nothing else.
  const script = options.passkeyScript ? " script-src 'self'; connect-src 'self';" : '';
  const img = ["'self'", logoOrigin(options.ui)].filter(Boolean).join(' ');
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none';${script} style-src 'unsafe-inline'; img-src ${img}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
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
