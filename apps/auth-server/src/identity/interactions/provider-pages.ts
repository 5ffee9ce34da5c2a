import type { Context } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { htmlHeaders, httpOrigins } from '../../kernel/security-headers.js';
import type { ProviderPages, UserCodeForm } from '../../oauth/pages.js';
import { escapeHtml } from '../ui/html.js';
import type { UiFactory } from '../ui/index.js';
import { deviceConfirmPage, deviceInputPage, logoutPage, messagePage } from './views.js';

/** Our user-code form, in place of oidc-provider's with an inline onfocus handler. */
function userCodeFormHtml(form: UserCodeForm, label: string) {
  const value = form.userCode === undefined ? '' : ` value="${escapeHtml(form.userCode)}"`;
  // `label` is a translation: HTML-safe already.
  return `<form id="op.deviceInputForm" method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(form.xsrf)}">
<label for="user_code">${label}</label>
<input id="user_code" type="text" name="user_code"${value} autocomplete="off" autofocus>
</form>`;
}

/** The pages of oidc-provider's flows (oauth/pages.ts), in the request's language and brand. */
export function createProviderPages(ui: UiFactory): ProviderPages {
  // The OIDC ui_locales of the request (authorize, end_session), then Accept-Language.
  const uiOf = (ctx: KoaContextWithOIDC) =>
    ui.of(ctx, (ctx.oidc?.params as { ui_locales?: unknown } | undefined)?.ui_locales);
  const message = (ctx: Context, status: number, title: string, text: string) => {
    const u = ui.of(ctx);
    htmlHeaders(ctx, [], { ui: u });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = messagePage(u, u.t(title), u.t(text));
  };
  return {
    logoutConfirm(ctx, form) {
      const client = ctx.oidc.client as { postLogoutRedirectUris?: string[] } | undefined;
      const u = uiOf(ctx);
      htmlHeaders(ctx, httpOrigins(client?.postLogoutRedirectUris), { ui: u });
      ctx.body = logoutPage(u, form);
    },
    loggedOut(ctx) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      ctx.body = messagePage(u, u.t('signin:logout.doneTitle'), u.t('signin:logout.done'));
    },
    userCodeInput(ctx, form, refusal) {
      const u = uiOf(ctx as KoaContextWithOIDC);
      htmlHeaders(ctx, [], { ui: u });
      ctx.body = deviceInputPage(
        u,
        userCodeFormHtml(form, u.t('device:code')),
        refusal && u.t(`device:errors.${refusal}`),
      );
    },
    userCodeConfirm(ctx, form, clientName, userCode) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      ctx.body = deviceConfirmPage(u, form, clientName, userCode);
    },
    deviceConnected(ctx) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      ctx.body = messagePage(u, u.t('device:connectedTitle'), u.t('device:connected'));
    },
    error(ctx, out) {
      const u = uiOf(ctx);
      htmlHeaders(ctx, [], { ui: u });
      ctx.type = 'html';
      ctx.body = messagePage(
        u,
        u.t('common:signInError'),
        escapeHtml(`${out.error}: ${out.error_description ?? ''}`),
      );
    },
    deviceExpired: (ctx) => message(ctx, 400, 'common:signInProblem', 'device:expired'),
    tooManyUserCodes: (ctx) => message(ctx, 429, 'device:inputTitle', 'device:tooManyCodes'),
  };
}
