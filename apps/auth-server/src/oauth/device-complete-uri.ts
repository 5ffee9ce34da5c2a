import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { deviceInputPage, escapeHtml } from '../identity/interactions/views.js';
import { htmlHeaders } from '../kernel/security-headers.js';
import type { UiFactory } from '../identity/ui/index.js';

type DeviceContext = Pick<KoaContextWithOIDC, 'oidc'>;

/** The xsrf secret oidc-provider keeps in the session for the device pages. */
function xsrfOf(ctx: DeviceContext): string | undefined {
  return (ctx.oidc as { session?: { state?: { secret?: string } } } | undefined)?.session?.state
    ?.secret;
}

/** Our user-code form, in place of oidc-provider's with an inline onfocus handler; `label` HTML-safe. */
export function userCodeForm(ctx: DeviceContext, label: string, userCode?: string): string {
  const action = ctx.oidc.urlFor('code_verification');
  const value = userCode === undefined ? '' : ` value="${escapeHtml(userCode)}"`;
  return `<form id="op.deviceInputForm" method="post" action="${escapeHtml(action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(xsrfOf(ctx) ?? '')}">
<label for="user_code">${label}</label>
<input id="user_code" type="text" name="user_code"${value} autocomplete="off" autofocus>
</form>`;
}

/** verification_uri_complete: a Continue button, against device-code phishing (RFC 8628 §5.4). */
export const prefilledUserCodePage = (uiFactory: UiFactory): Middleware =>
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
    const ui = uiFactory.of(ctx);
    htmlHeaders(ctx, [], { ui });
    ctx.body = deviceInputPage(ui, userCodeForm({ oidc }, ui.t('device:code'), userCode));
  };
