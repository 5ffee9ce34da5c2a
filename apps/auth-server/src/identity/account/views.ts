import { page } from '../interactions/views.js';
import { markup, joinHtml, translated, type SafeHtml, type TranslateHtml } from '../ui/html.js';
import type { Ui } from '../ui/index.js';

/** Self-service pages of the account (README "Your account"); `t` output is HTML-safe. */
const hidden = (csrf: string) => markup`<input type="hidden" name="csrf" value="${csrf}">`;
const errorLine = (error: SafeHtml | undefined) =>
  error ? markup`<p class="error" role="alert">${error}</p>` : '';
const noticeLine = (notice: SafeHtml | undefined) =>
  notice ? markup`<p role="status">${notice}</p>` : '';
const back = (t: TranslateHtml) => markup`<p><a href="/account">${t('account:back')}</a></p>`;
const day = (at: Date | null) => (at ? at.toISOString().slice(0, 16).replace('T', ' ') : '-');

/** `error` and `notice` below are translated text (HTML-safe). */
export function signInAgainPage(ui: Ui, reason: SafeHtml): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('account:title'),
    markup`<p>${reason}</p>
<p><a href="/account/sign-in">${t('account:signIn')}</a></p>`,
  );
}

export function passwordPage(
  ui: Ui,
  input: { csrf: string; error?: SafeHtml | undefined },
): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('account:passwordTitle'),
    markup`${errorLine(input.error)}
<form method="post" action="/account/password">${hidden(input.csrf)}
<label for="current_password">${t('account:currentPassword')}</label>
<input id="current_password" type="password" name="current_password" autocomplete="current-password" required autofocus>
<label for="new_password">${t('account:newPassword')}</label>
<input id="new_password" type="password" name="new_password" autocomplete="new-password" required>
<button type="submit">${t('account:passwordSubmit')}</button></form>
${back(t)}`,
  );
}

export function emailPage(
  ui: Ui,
  input: {
    csrf: string;
    email?: string;
    error?: SafeHtml | undefined;
    notice?: SafeHtml | undefined;
  },
): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('account:emailTitle'),
    markup`${errorLine(input.error)}${noticeLine(input.notice)}
<form method="post" action="/account/email">${hidden(input.csrf)}
<label for="email">${t('account:newEmail')}</label>
<input id="email" type="email" name="email" autocomplete="email" required autofocus value="${input.email ?? ''}">
<label for="current_password">${t('account:currentPassword')}</label>
<input id="current_password" type="password" name="current_password" autocomplete="current-password" required>
<button type="submit">${t('account:emailSubmit')}</button></form>
${back(t)}`,
  );
}

/** GET of a mailed link: a button, so a scanner's prefetch uses nothing up. */
export function confirmEmailPage(ui: Ui, input: { token: string; email: string }): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('account:confirmTitle'),
    markup`<p>${t('account:confirmText', { email: input.email })}</p>
<form method="post" action="/account/email/confirm">
<input type="hidden" name="token" value="${input.token}">
<button type="submit">${t('account:confirmSubmit')}</button></form>`,
  );
}

/** The old address's link: a button, since mail scanners open links (GET) on their own. */
export function cancelEmailPage(
  ui: Ui,
  input: { token: string; from: string; to: string },
): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('account:cancelTitle'),
    markup`<p>${t('account:cancelText', { from: input.from, to: input.to })}</p>
<form method="post" action="/account/email/cancel">
<input type="hidden" name="token" value="${input.token}">
<button type="submit">${t('account:cancelSubmit')}</button></form>`,
  );
}

/** After a cancel: whoever asked knows the password, so the way to a new one is shown. */
export function emailCancelledPage(ui: Ui, email: string): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('account:cancelTitle'),
    markup`<p role="status">${t('account:cancelled', { email })}</p>
<p><a href="/password/forgot">${t('account:chooseNewPassword')}</a></p>`,
  );
}

export function messagePage(ui: Ui, title: SafeHtml, message: SafeHtml, link = true): SafeHtml {
  const t = translated(ui.t);
  return page(ui, title, markup`<p role="status">${message}</p>${link ? back(t) : ''}`);
}

export interface SessionView {
  uid: string;
  signedInAt: Date | null;
  current: boolean;
  apps: string[];
}

export interface GrantView {
  id: string;
  app: string;
  scopes: string[];
  since: Date | null;
}

export function sessionsPage(
  ui: Ui,
  input: {
    csrf: string;
    sessions: SessionView[];
    grants: GrantView[];
    notice?: SafeHtml | undefined;
  },
): SafeHtml {
  const t = translated(ui.t);
  const sessions = input.sessions.map(
    (
      s,
    ) => markup`<li class="session">${s.current ? markup`<strong>${t('account:sessionThisBrowser')}</strong> · ` : ''}${t('account:sessionSignedIn', { at: day(s.signedInAt) })}
${s.apps.length ? markup`<br><span class="muted">${t('account:sessionApps', { apps: s.apps.join(', ') })}</span>` : ''}
<form method="post" action="/account/sessions/end">${hidden(input.csrf)}<input type="hidden" name="session" value="${s.uid}"><button type="submit">${t('account:sessionEnd')}</button></form></li>`,
  );
  const grants = input.grants.map(
    (
      g,
    ) => markup`<li class="grant"><strong>${g.app}</strong> · ${t('account:appSince', { at: day(g.since) })}
<br><span class="muted">${t('account:appScopes', { scopes: g.scopes.join(' ') })}</span>
<form method="post" action="/account/apps/revoke">${hidden(input.csrf)}<input type="hidden" name="grant" value="${g.id}"><button type="submit">${t('account:appRevoke')}</button></form></li>`,
  );
  const list = (items: SafeHtml[]) =>
    items.length ? markup`<ul>${joinHtml(items, '\n')}</ul>` : markup`<p>${t('account:none')}</p>`;
  return page(
    ui,
    t('account:sessionsTitle'),
    markup`${noticeLine(input.notice)}${list(sessions)}
<form method="post" action="/account/sessions/end-others">${hidden(input.csrf)}<button type="submit">${t('account:sessionsEndOthers')}</button></form>
<h2>${t('account:appsTitle')}</h2>${list(grants)}
${back(t)}`,
  );
}

export function closePage(ui: Ui, input: { csrf: string; error?: SafeHtml | undefined }): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('account:closeTitle'),
    markup`<p>${t('account:closeText')}</p>${errorLine(input.error)}
<form method="post" action="/account/close">${hidden(input.csrf)}
<label for="confirm_email">${t('account:closeConfirm')}</label>
<input id="confirm_email" type="email" name="confirm_email" autocomplete="off" required>
<button type="submit">${t('account:closeSubmit')}</button></form>
${back(t)}`,
  );
}
