import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { ProviderPages, UserCodeForm } from './pages.js';

type DeviceContext = Pick<KoaContextWithOIDC, 'oidc'>;

/** The xsrf secret oidc-provider keeps in the session for the device pages. */
function xsrfOf(ctx: DeviceContext): string | undefined {
  return (ctx.oidc as { session?: { state?: { secret?: string } } } | undefined)?.session?.state
    ?.secret;
}

/** What our user-code form posts, in place of oidc-provider's form with an inline onfocus handler. */
export function userCodeForm(ctx: DeviceContext, userCode?: string): UserCodeForm {
  return { action: ctx.oidc.urlFor('code_verification'), xsrf: xsrfOf(ctx) ?? '', userCode };
}

/** verification_uri_complete: a Continue button, against device-code phishing (RFC 8628 §5.4). */
export const prefilledUserCodePage = (pages: ProviderPages): Middleware =>
  async function prefilledUserCodePage(ctx, next) {
    await next();
    const oidc = (ctx as unknown as KoaContextWithOIDC).oidc as
      KoaContextWithOIDC['oidc'] | undefined;
    const userCode = (oidc?.params as { user_code?: unknown } | undefined)?.user_code;
    if (
      ctx.method !== 'GET' ||
      oidc?.route !== 'code_verification' ||
      typeof userCode !== 'string' ||
      !xsrfOf({ oidc })
    ) {
      return;
    }
    ctx.status = 200;
    ctx.type = 'html';
    pages.userCodeInput(ctx, userCodeForm({ oidc }, userCode));
  };
