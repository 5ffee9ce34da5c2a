import type { AuthorizationDetail } from '@portcullis/claims';
import { paymentDetailOf } from '@portcullis/shop';
import { markup, translated, unsafeHtml, type SafeHtml } from '../ui/html.js';
import type { Brand, Ui } from '../ui/index.js';

/** The layout's CSS; colours are the brand's (validated hex, config.ts), no other value comes in. */
const style = (brand: Brand) =>
  // Raw text in <style>: escaping would change it, and only the validated colours come in.
  unsafeHtml(`body{font-family:system-ui,sans-serif;background:${brand.backgroundColor};margin:0;padding:40px 16px}
header{max-width:360px;margin:0 auto 12px;display:flex;align-items:center;gap:10px;font-weight:600;font-size:1.1em}
header img{max-height:40px;max-width:160px}
main{max-width:360px;margin:0 auto;background:#fff;padding:24px 28px;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4em;margin-top:0}label{display:block;margin:12px 0 4px}a{color:${brand.primaryColor}}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:8px;font-size:1em}
button{margin-top:16px;padding:8px 16px;font-size:1em;cursor:pointer;background:${brand.primaryColor};color:#fff;border:1px solid ${brand.primaryColor};border-radius:4px}
.error{color:#b00020}.muted{color:#666;font-size:.9em}
ul{padding-left:20px}code{font-size:1.4em;letter-spacing:.1em}`);

/**
 * Every page: `ui` gives its language (`<html lang>`) and the brand (name, logo, colours);
 * `title` and `body` are markup (`translated(ui.t)(…)`, ``markup`…` ``). The result, as a
 * string, is the response body: send it with `htmlHeaders(ctx, formTargets, { ui })` so the
 * CSP allows the logo.
 */
export function page(ui: Ui, title: SafeHtml, body: SafeHtml): SafeHtml {
  const { brand } = ui;
  const logo = brand.logoUrl ? markup`<img src="${brand.logoUrl}" alt="">` : '';
  return markup`<!DOCTYPE html>
<html lang="${ui.language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} – ${brand.productName}</title><style>${style(brand)}</style></head>
<body><header>${logo}<span>${brand.productName}</span></header>
<main><h1>${title}</h1>
${body}
</main></body></html>`;
}

const errorLine = (error: SafeHtml | undefined) =>
  error ? markup`<p class="error" role="alert">${error}</p>` : '';

/** `error`: HTML-safe text (a `translated(ui.t)(…)` result). */
export function loginPage(
  ui: Ui,
  input: {
    action: string;
    csrf: string;
    clientName: string;
    email?: string | undefined;
    error?: SafeHtml | undefined;
    /** "Sign in with a passkey": its form and script (mfa/passkeys-views.ts). */
    passkey?: SafeHtml | undefined;
    /** Where "Forgot password?" and (when sign-up is open) "Create an account" lead. */
    forgotPasswordHref: string;
    signupHref?: string | undefined;
  },
): SafeHtml {
  const t = translated(ui.t);
  const signup = input.signupHref
    ? markup`<p><a href="${input.signupHref}">${t('signin:createAccount')}</a></p>`
    : '';
  return page(
    ui,
    t('signin:title'),
    markup`<p class="muted">${t('signin:toContinueTo', { client: input.clientName })}</p>
${errorLine(input.error)}
<form method="post" action="${input.action}" autocomplete="on">
<input type="hidden" name="csrf" value="${input.csrf}">
<label for="email">${t('signin:email')}</label>
<input id="email" type="email" name="email" required autofocus value="${input.email ?? ''}">
<label for="password">${t('signin:password')}</label>
<input id="password" type="password" name="password" required>
<button type="submit">${t('signin:submit')}</button>
</form>
<p><a href="${input.forgotPasswordHref}">${t('signin:forgotPassword')}</a></p>
${signup}${input.passkey}
<form method="post" action="${input.action.replace(/\/login$/, '/abort')}">
<input type="hidden" name="csrf" value="${input.csrf}"><button type="submit">${t('common:cancel')}</button></form>`,
  );
}

/** The catalogue key of a scope's description (`orders:*` → `orders_all`), see locales/en/consent.ts. */
export const scopeKey = (scope: string) => scope.replace(/\*$/, 'all').replace(/[:-]/g, '_');

/**
 * A scope in words, with its name: the page's language if its catalogue has them, else the
 * description its API was registered with; an unknown one by its name only.
 */
function scopeItem(ui: Ui, scope: string, description = ''): SafeHtml {
  const words = translated(ui.t)(`consent:scopes.${scopeKey(scope)}`, { defaultValue: '' });
  const name = markup`<code class="muted">${scope}</code>`;
  const said = words.toString() ? words : description;
  return said ? markup`<li>${said} ${name}</li>` : markup`<li>${name}</li>`;
}

/** One API a client asks for on the consent page: its name and the permissions asked. */
export interface ConsentedApi {
  name: string;
  permissions: { name: string; description: string }[];
}

/** An amount in minor units as the page's language writes it (`1250`, EUR → `€12.50`). */
export function formatAmount(language: string, amount: number, currency: string): string {
  const format = new Intl.NumberFormat(language, { style: 'currency', currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amount / 10 ** digits);
}

/** Each payment detail in words; a detail of another type by its type only. */
export function authorizationDetailItems(ui: Ui, details: AuthorizationDetail[]): SafeHtml[] {
  const t = translated(ui.t);
  return details.map((detail) => {
    const payment = paymentDetailOf({ ...detail, authorizationId: '-' });
    if (!payment) return t('consent:otherDetail', { type: detail.type });
    return t('consent:payment', {
      amount: formatAmount(ui.language, payment.amount, payment.currency),
      order: payment.orderId,
    });
  });
}

export function consentPage(
  ui: Ui,
  input: {
    action: string;
    abortAction: string;
    csrf: string;
    clientName: string;
    /** The client's web host (a metadata document's, a registered client's redirect), shown with its name. */
    clientHost?: string | undefined;
    /** OpenID scopes. */
    scopes: string[];
    /** Each API asked for, under its name. */
    apis?: ConsentedApi[] | undefined;
    /** RFC 9396 details in words (authorizationDetailItems), shown above the scopes. */
    details?: SafeHtml[] | undefined;
  },
): SafeHtml {
  const t = translated(ui.t);
  const items = input.scopes.map((s) => scopeItem(ui, s));
  const apis = (input.apis ?? []).map(
    (api) =>
      markup`<p><strong>${api.name}</strong></p><ul class="api">${api.permissions.map((p) => scopeItem(ui, p.name, p.description))}</ul>`,
  );
  const details = input.details?.length
    ? markup`<p><strong>${t('consent:detailsHeading')}</strong></p><ul class="details">${input.details.map((d) => markup`<li>${d}</li>`)}</ul>`
    : '';
  const host =
    input.clientHost === undefined
      ? ''
      : markup`<p>${t('consent:clientHost', { host: input.clientHost })}</p>`;
  return page(
    ui,
    t('consent:title'),
    markup`${host}
<p>${t('consent:asksFor', { client: input.clientName })}</p>${details}<ul>${items}</ul>${apis}
<form method="post" action="${input.action}">
<input type="hidden" name="csrf" value="${input.csrf}">
<button type="submit" name="decision" value="allow">${t('consent:allow')}</button></form>
<form method="post" action="${input.abortAction}">
<input type="hidden" name="csrf" value="${input.csrf}">
<button type="submit" name="decision" value="deny">${t('consent:deny')}</button></form>`,
  );
}

/** `form` is the user-code form (oauth/device-complete-uri.ts), trusted HTML; `error` HTML-safe. */
export function deviceInputPage(ui: Ui, form: SafeHtml, error?: SafeHtml): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('device:inputTitle'),
    markup`<p>${t('device:enterCode')}</p>${errorLine(error)}
${form}
<button type="submit" form="op.deviceInputForm">${t('common:continue')}</button>`,
  );
}

/** `form`: oidc-provider's confirm form (trusted HTML). */
export function deviceConfirmPage(
  ui: Ui,
  form: SafeHtml,
  clientName: string,
  userCode: string,
): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('device:confirmTitle'),
    markup`<p>${t('device:wantsToSignIn', { client: clientName })}</p>
<p><code>${userCode}</code></p>
<p class="muted">${t('device:ifNot')}</p>
${form}
<button type="submit" form="op.deviceConfirmForm">${t('common:continue')}</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">${t('device:abort')}</button>`,
  );
}

/** RP-initiated logout: oidc-provider's hidden form (trusted HTML), and our buttons for it. */
export function logoutPage(ui: Ui, form: SafeHtml): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('signin:logout.title'),
    markup`<p>${t('signin:logout.question')}</p>
${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes">${t('signin:logout.yes')}</button>
<button type="submit" form="op.logoutForm">${t('signin:logout.no')}</button>`,
  );
}

/** `title` and `message`: HTML-safe text (`translated(ui.t)(…)` results). */
export function messagePage(ui: Ui, title: SafeHtml, message: SafeHtml): SafeHtml {
  return page(ui, title, markup`<p>${message}</p>`);
}
