import { escapeHtml, page } from '../interactions/views.js';

/** Pages of the second factor and the account page (no script; see interactions/views.ts). */
const errorLine = (error: string | undefined) =>
  error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';

const hidden = (csrf: string) => `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;

export function factorPage(input: {
  uid: string;
  csrf: string;
  clientName: string;
  hasTotp: boolean;
  hasRecoveryCodes: boolean;
  /** Other kinds' forms (a passkey), trusted HTML. */
  otherForms: string[];
  /** Other kinds' set-up forms for a user without a factor (a passkey), trusted HTML. */
  setupForms: string[];
  error?: string | undefined;
}): string {
  const base = `/interaction/${escapeHtml(input.uid)}`;
  const totp = input.hasTotp
    ? `<form method="post" action="${base}/totp">${hidden(input.csrf)}
<label for="code">Code from your authenticator app</label>
<input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required autofocus>
<button type="submit">Verify</button></form>`
    : '';
  const recovery = input.hasRecoveryCodes
    ? `<details><summary>Use a recovery code</summary>
<form method="post" action="${base}/recovery">${hidden(input.csrf)}
<label for="recovery_code">Recovery code</label>
<input id="recovery_code" type="text" name="recovery_code" autocomplete="off" required>
<button type="submit">Use this code</button></form></details>`
    : '';
  const none =
    !input.hasTotp && input.otherForms.length === 0
      ? `<p>${escapeHtml(input.clientName)} requires a second sign-in factor, and your account has none yet.</p>
<form method="post" action="${base}/totp/start">${hidden(input.csrf)}<button type="submit">Set up an authenticator app</button></form>
${input.setupForms.join('\n')}
<p class="muted">Or set one up on <a href="/account">your account page</a>, then sign in again.</p>`
      : '';
  return page(
    'Verify it’s you',
    `<p class="muted">A second step to continue to <strong>${escapeHtml(input.clientName)}</strong></p>
${errorLine(input.error)}${none}${totp}${input.otherForms.join('\n')}${recovery}
<form method="post" action="${base}/abort">${hidden(input.csrf)}<button type="submit">Cancel</button></form>`,
  );
}

export function accountSignInPage(reason: string): string {
  return page(
    'Your account',
    `<p>${escapeHtml(reason)}</p>
<p><a href="/account/sign-in">Sign in</a></p>`,
  );
}

export function accountPage(input: {
  email: string;
  csrf: string;
  totp: { enrolledAt: Date } | undefined;
  recoveryCodesLeft: number;
  hasFactor: boolean;
  /** Other kinds' sections (passkeys), trusted HTML. */
  sections: string[];
  notice?: string | undefined;
}): string {
  const totp = input.totp
    ? `<p>Authenticator app: on since ${escapeHtml(input.totp.enrolledAt.toISOString().slice(0, 10))}.</p>
<form method="post" action="/account/totp/remove">${hidden(input.csrf)}<button type="submit">Remove the authenticator app</button></form>`
    : `<p>Authenticator app: not set up.</p>
<form method="post" action="/account/totp/start">${hidden(input.csrf)}<button type="submit">Set up an authenticator app</button></form>`;
  const recovery = input.hasFactor
    ? `<h2>Recovery codes</h2><p>${input.recoveryCodesLeft} unused.</p>
<form method="post" action="/account/recovery-codes">${hidden(input.csrf)}<button type="submit">Make new recovery codes</button></form>`
    : '';
  return page(
    'Your account',
    `<p class="muted">Signed in as <strong>${escapeHtml(input.email)}</strong></p>
${input.notice ? `<p role="status">${escapeHtml(input.notice)}</p>` : ''}
<ul class="account-links"><li><a href="/account/password">Change your password</a></li>
<li><a href="/account/email">Change your e-mail address</a></li>
<li><a href="/account/sessions">Where you are signed in, and apps with access</a></li>
<li><a href="/account/data">Download your data</a></li>
<li><a href="/account/close">Close your account</a></li></ul>
<h2>Second factor</h2>${totp}${input.sections.join('\n')}${recovery}`,
  );
}

export function totpEnrolPage(input: {
  csrf: string;
  secret: string;
  qrUrl: string;
  error?: string | undefined;
  /** Where the code goes, and the way back: the account page's unless given. */
  action?: string;
  cancelHref?: string;
}): string {
  const grouped = input.secret.match(/.{1,4}/g)!.join(' ');
  return page(
    'Set up an authenticator app',
    `<p>Scan this code with your authenticator app, or type the key into it.</p>
<p><img src="${escapeHtml(input.qrUrl)}" alt="QR code of the authenticator key" width="220" height="220"></p>
<p>Key: <code id="totp-secret">${escapeHtml(grouped)}</code></p>
${errorLine(input.error)}
<form method="post" action="${escapeHtml(input.action ?? '/account/totp/confirm')}">${hidden(input.csrf)}
<label for="code">Code shown by the app</label>
<input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required autofocus>
<button type="submit">Turn on</button></form>
<p><a href="${escapeHtml(input.cancelHref ?? '/account')}">Cancel</a></p>`,
  );
}

export function recoveryCodesPage(
  codes: string[],
  intro: string,
  next: { href: string; label: string } = { href: '/account', label: 'Done' },
): string {
  const items = codes.map((c) => `<li><code class="recovery-code">${escapeHtml(c)}</code></li>`);
  return page(
    'Your recovery codes',
    `<p role="status">${escapeHtml(intro)}</p>
<p>Each code signs you in once when you cannot use your second factor. Keep them somewhere
safe: they are shown only now.</p>
<ul>${items.join('')}</ul>
<p><a href="${escapeHtml(next.href)}">${escapeHtml(next.label)}</a></p>`,
  );
}
