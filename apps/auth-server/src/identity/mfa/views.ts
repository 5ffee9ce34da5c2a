import { page } from '../interactions/views.js';
import { markup, joinHtml, translated, type SafeHtml } from '../ui/html.js';
import type { Ui } from '../ui/index.js';

/** Pages of the second factor and the account page (no script; see interactions/views.ts). */
const errorLine = (error: SafeHtml | undefined) =>
  error ? markup`<p class="error" role="alert">${error}</p>` : '';

const hidden = (csrf: string) => markup`<input type="hidden" name="csrf" value="${csrf}">`;

/** Forms or sections of other factor kinds (trusted HTML), one a line. */
const lines = (parts: SafeHtml[]) => joinHtml(parts, '\n');

/** `error`: HTML-safe text (a `translated(ui.t)(…)` result). */
export function factorPage(
  ui: Ui,
  input: {
    uid: string;
    csrf: string;
    clientName: string;
    hasTotp: boolean;
    hasRecoveryCodes: boolean;
    /** Other kinds' forms (a passkey), trusted HTML. */
    otherForms: SafeHtml[];
    /** Other kinds' set-up forms for a user without a factor (a passkey), trusted HTML. */
    setupForms: SafeHtml[];
    error?: SafeHtml | undefined;
  },
): SafeHtml {
  const t = translated(ui.t);
  const base = `/interaction/${input.uid}`;
  const totp = input.hasTotp
    ? markup`<form method="post" action="${base}/totp">${hidden(input.csrf)}
<label for="code">${t('mfa:appCode')}</label>
<input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required autofocus>
<button type="submit">${t('mfa:verify')}</button></form>`
    : '';
  const recovery = input.hasRecoveryCodes
    ? markup`<details><summary>${t('mfa:useRecoveryCode')}</summary>
<form method="post" action="${base}/recovery">${hidden(input.csrf)}
<label for="recovery_code">${t('mfa:recoveryCode')}</label>
<input id="recovery_code" type="text" name="recovery_code" autocomplete="off" required>
<button type="submit">${t('mfa:useThisCode')}</button></form></details>`
    : '';
  const none =
    !input.hasTotp && input.otherForms.length === 0
      ? markup`<p>${t('mfa:noFactor', { client: input.clientName })}</p>
<form method="post" action="${base}/totp/start">${hidden(input.csrf)}<button type="submit">${t('mfa:setUpApp')}</button></form>
${lines(input.setupForms)}
<p class="muted">${t('mfa:orOnAccountPage')}</p>`
      : '';
  return page(
    ui,
    t('mfa:title'),
    markup`<p class="muted">${t('mfa:secondStepFor', { client: input.clientName })}</p>
${errorLine(input.error)}${none}${totp}${lines(input.otherForms)}${recovery}
<form method="post" action="${base}/abort">${hidden(input.csrf)}<button type="submit">${t('common:cancel')}</button></form>`,
  );
}

/** `reason`: HTML-safe text (a `translated(ui.t)(…)` result). */
export function accountSignInPage(ui: Ui, reason: SafeHtml): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('accountPage:title'),
    markup`<p>${reason}</p>
<p><a href="/account/sign-in">${t('accountPage:signIn')}</a></p>`,
  );
}

export function accountPage(
  ui: Ui,
  input: {
    email: string;
    csrf: string;
    totp: { enrolledAt: Date } | undefined;
    recoveryCodesLeft: number;
    hasFactor: boolean;
    /** Other kinds' sections (passkeys), trusted HTML. */
    sections: SafeHtml[];
    /** HTML-safe text (a `translated(ui.t)(…)` result). */
    notice?: SafeHtml | undefined;
  },
): SafeHtml {
  const t = translated(ui.t);
  const totp = input.totp
    ? markup`<p>${t('accountPage:appOnSince', { date: input.totp.enrolledAt.toISOString().slice(0, 10) })}</p>
<form method="post" action="/account/totp/remove">${hidden(input.csrf)}<button type="submit">${t('accountPage:removeApp')}</button></form>`
    : markup`<p>${t('accountPage:appNotSetUp')}</p>
<form method="post" action="/account/totp/start">${hidden(input.csrf)}<button type="submit">${t('accountPage:setUpApp')}</button></form>`;
  const recovery = input.hasFactor
    ? markup`<h2>${t('accountPage:recoveryCodes')}</h2><p>${t('accountPage:unused', { n: input.recoveryCodesLeft })}</p>
<form method="post" action="/account/recovery-codes">${hidden(input.csrf)}<button type="submit">${t('accountPage:newRecoveryCodes')}</button></form>`
    : '';
  return page(
    ui,
    t('accountPage:title'),
    markup`<p class="muted">${t('accountPage:signedInAs', { email: input.email })}</p>
${input.notice ? markup`<p role="status">${input.notice}</p>` : ''}
<ul class="account-links"><li><a href="/account/password">${t('account:linkPassword')}</a></li>
<li><a href="/account/email">${t('account:linkEmail')}</a></li>
<li><a href="/account/sessions">${t('account:linkSessions')}</a></li>
<li><a href="/account/data">${t('account:linkData')}</a></li>
<li><a href="/account/close">${t('account:linkClose')}</a></li></ul>
<h2>${t('accountPage:secondFactor')}</h2>${totp}${lines(input.sections)}${recovery}`,
  );
}

export function totpEnrolPage(
  ui: Ui,
  input: {
    csrf: string;
    secret: string;
    qrUrl: string;
    /** HTML-safe text (a `translated(ui.t)(…)` result). */
    error?: SafeHtml | undefined;
    /** Where the code goes, and the way back: the account page's unless given. */
    action?: string;
    cancelHref?: string;
  },
): SafeHtml {
  const t = translated(ui.t);
  const grouped = input.secret.match(/.{1,4}/g)!.join(' ');
  return page(
    ui,
    t('mfa:enrol.title'),
    markup`<p>${t('mfa:enrol.scan')}</p>
<p><img src="${input.qrUrl}" alt="${t('mfa:enrol.qrAlt')}" width="220" height="220"></p>
<p>${t('mfa:enrol.key')} <code id="totp-secret">${grouped}</code></p>
${errorLine(input.error)}
<form method="post" action="${input.action ?? '/account/totp/confirm'}">${hidden(input.csrf)}
<label for="code">${t('mfa:enrol.code')}</label>
<input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required autofocus>
<button type="submit">${t('mfa:enrol.turnOn')}</button></form>
<p><a href="${input.cancelHref ?? '/account'}">${t('common:cancel')}</a></p>`,
  );
}

/** `intro` and `next.label`: HTML-safe text (`translated(ui.t)(…)` results); default: "Done", to the account page. */
export function recoveryCodesPage(
  ui: Ui,
  codes: string[],
  intro: SafeHtml,
  next: { href: string; label: SafeHtml } = {
    href: '/account',
    label: translated(ui.t)('common:done'),
  },
): SafeHtml {
  const t = translated(ui.t);
  const items = codes.map((c) => markup`<li><code class="recovery-code">${c}</code></li>`);
  return page(
    ui,
    t('mfa:recovery.title'),
    markup`<p role="status">${intro}</p>
<p>${t('mfa:recovery.explain')}</p>
<ul>${items}</ul>
<p><a href="${next.href}">${next.label}</a></p>`,
  );
}
