import type { Context } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { htmlHeaders, httpOrigins } from '../../kernel/security-headers.js';
import type { ProviderPages, UserCodeForm } from '../../oauth/pages.js';
import { markup, translated, unsafeHtml, type SafeHtml, type TranslateHtml } from '../ui/html.js';
import type { UiFactory } from '../ui/index.js';
import { deviceConfirmPage, deviceInputPage, logoutPage, messagePage } from './views.js';

/** Our user-code form, in place of oidc-provider's with an inline onfocus handler. */
function userCodeFormHtml(form: UserCodeForm, t: TranslateHtml): SafeHtml {
  const value = form.userCode === undefined ? '' : markup` value="${form.userCode}"`;
  return markup`<form id="op.deviceInputForm" method="post" action="${form.action}">
<input type="hidden" name="xsrf" value="${form.xsrf}">
<label for="user_code">${t('device:code')}</label>
<input id="user_code" type="text" name="user_code"${value} autocomplete="off" autofocus>
</form>`;
}

/**
 * oidc-provider's own form (logout, device confirm) as it renders it: its action URL and xsrf
 * secret are its own, the user code it escapes; the pages' one markup not built by `markup`.
 */
const providerForm = (form: string): SafeHtml => unsafeHtml(form);

/** The pages of oidc-provider's flows (oauth/pages.ts), in the request's language and brand. */
export function createProviderPages(ui: UiFactory): ProviderPages {
  // The OIDC ui_locales of the request (authorize, end_session), then Accept-Language.
  const uiOf = (ctx: KoaContextWithOIDC) =>
    ui.of(ctx, (ctx.oidc?.params as { ui_locales?: unknown } | undefined)?.ui_locales);
  const message = (ctx: Context, status: number, title: string, text: string) => {
    const u = ui.of(ctx);
    const t = translated(u.t);
    htmlHeaders(ctx, [], { ui: u });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = messagePage(u, t(title), t(text)).toString();
  };
  return {
    logoutConfirm(ctx, form) {
      const client = ctx.oidc.client as { postLogoutRedirectUris?: string[] } | undefined;
      const u = uiOf(ctx);
      htmlHeaders(ctx, httpOrigins(client?.postLogoutRedirectUris), { ui: u });
      ctx.body = logoutPage(u, providerForm(form)).toString();
    },
    loggedOut(ctx) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      const t = translated(u.t);
      ctx.body = messagePage(u, t('signin:logout.doneTitle'), t('signin:logout.done')).toString();
    },
    userCodeInput(ctx, form, refusal) {
      const u = uiOf(ctx as KoaContextWithOIDC);
      htmlHeaders(ctx, [], { ui: u });
      const t = translated(u.t);
      ctx.body = deviceInputPage(
        u,
        userCodeFormHtml(form, t),
        refusal && t(`device:errors.${refusal}`),
      ).toString();
    },
    userCodeConfirm(ctx, form, clientName, userCode) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      ctx.body = deviceConfirmPage(u, providerForm(form), clientName, userCode).toString();
    },
    deviceConnected(ctx) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      const t = translated(u.t);
      ctx.body = messagePage(u, t('device:connectedTitle'), t('device:connected')).toString();
    },
    error(ctx, out) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      ctx.type = 'html';
      ctx.body = messagePage(
        u,
        translated(u.t)('common:signInError'),
        markup`${out.error}: ${out.error_description ?? ''}`,
      ).toString();
    },
    deviceExpired: (ctx) => message(ctx, 400, 'common:signInProblem', 'device:expired'),
    tooManyUserCodes: (ctx) => message(ctx, 429, 'device:inputTitle', 'device:tooManyCodes'),
  };
}
