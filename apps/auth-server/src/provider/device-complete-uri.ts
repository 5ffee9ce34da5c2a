import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { deviceInputPage, escapeHtml } from '../interactions/views.js';
import { htmlHeaders } from '../security-headers.js';

type DeviceContext = Pick<KoaContextWithOIDC, 'oidc'>;

/** The xsrf secret oidc-provider keeps in the session for the device pages. */
function xsrfOf(ctx: DeviceContext): string | undefined {
  return (ctx.oidc as { session?: { state?: { secret?: string } } } | undefined)?.session?.state
    ?.secret;
}

/**
 * The user-code form (what the "Connect a device" page's Continue button submits), in
 * place of oidc-provider's, whose input carries an inline onfocus handler.
 */
export function userCodeForm(ctx: DeviceContext, userCode?: string): string {
  const action = ctx.oidc.urlFor('code_verification');
  const value = userCode === undefined ? '' : ` value="${escapeHtml(userCode)}"`;
  return `<form id="op.deviceInputForm" method="post" action="${escapeHtml(action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(xsrfOf(ctx) ?? '')}">
<label for="user_code">Code</label>
<input id="user_code" type="text" name="user_code"${value} autocomplete="off" autofocus>
</form>`;
}

/**
 * The page behind verification_uri_complete (`/device?user_code=…`, RFC 8628 §3.3.1).
 * oidc-provider answers it with a form its inline script submits at once, without our
 * CSP and frame headers. It gets our input page instead, with the code filled in and a
 * Continue button the user presses, and then the confirmation naming the client: a link
 * sent by an attacker (device-code phishing, RFC 8628 §5.4) cannot carry the user past
 * looking at what they approve. README "Device code".
 */
export const prefilledUserCodePage: Middleware = async function prefilledUserCodePage(ctx, next) {
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
  htmlHeaders(ctx);
  ctx.body = deviceInputPage(userCodeForm({ oidc }, userCode));
};
