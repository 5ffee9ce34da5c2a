/** Server-rendered pages: no inline script, every interpolated value escaped. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;padding:40px 16px}
main{max-width:360px;margin:0 auto;background:#fff;padding:24px 28px;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4em;margin-top:0}label{display:block;margin:12px 0 4px}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:8px;font-size:1em}
button{margin-top:16px;padding:8px 16px;font-size:1em;cursor:pointer}.error{color:#b00020}.muted{color:#666;font-size:.9em}
ul{padding-left:20px}code{font-size:1.4em;letter-spacing:.1em}`;

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>`;
}

const errorLine = (error: string | undefined) =>
  error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';

export function loginPage(input: {
  action: string;
  csrf: string;
  clientName: string;
  email?: string | undefined;
  error?: string | undefined;
  /** "Sign in with a passkey": its form and script (mfa/passkeys-views.ts). */
  passkey?: string | undefined;
}): string {
  return page(
    'Sign in',
    `<p class="muted">to continue to <strong>${escapeHtml(input.clientName)}</strong></p>
${errorLine(input.error)}
<form method="post" action="${escapeHtml(input.action)}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<label for="email">Email</label>
<input id="email" type="email" name="email" required autofocus value="${escapeHtml(input.email ?? '')}">
<label for="password">Password</label>
<input id="password" type="password" name="password" required>
<button type="submit">Sign in</button>
</form>
${input.passkey ?? ''}
<form method="post" action="${escapeHtml(input.action.replace(/\/login$/, '/abort'))}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}"><button type="submit">Cancel</button></form>`,
  );
}

export function consentPage(input: {
  action: string;
  abortAction: string;
  csrf: string;
  clientName: string;
  /** The client's web host (a metadata document's, a registered client's redirect), shown with its name. */
  clientHost?: string | undefined;
  scopes: string[];
}): string {
  const items = input.scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('');
  return page(
    'Authorize access',
    `${input.clientHost === undefined ? '' : `<p>This application is at <strong>${escapeHtml(input.clientHost)}</strong>.</p>`}
<p><strong>${escapeHtml(input.clientName)}</strong> asks for:</p><ul>${items}</ul>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<button type="submit" name="decision" value="allow">Allow</button></form>
<form method="post" action="${escapeHtml(input.abortAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

/** `form` is oidc-provider's own form markup (it carries its xsrf token); it is trusted HTML. */
export function deviceInputPage(form: string, error?: string): string {
  return page(
    'Connect a device',
    `<p>Enter the code shown on your device.</p>${errorLine(error)}
${form}
<button type="submit" form="op.deviceInputForm">Continue</button>`,
  );
}

export function deviceConfirmPage(form: string, clientName: string, userCode: string): string {
  return page(
    'Confirm the device',
    `<p><strong>${escapeHtml(clientName)}</strong> wants to sign in. Check that your device shows:</p>
<p><code>${escapeHtml(userCode)}</code></p>
<p class="muted">If it does not, or you did not start this, choose Abort.</p>
${form}
<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Abort</button>`,
  );
}

/** RP-initiated logout: oidc-provider's hidden form, and our buttons for it. */
export function logoutPage(form: string): string {
  return page(
    'Sign out',
    `<p>Do you want to sign out?</p>
${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<p>${escapeHtml(message)}</p>`);
}
