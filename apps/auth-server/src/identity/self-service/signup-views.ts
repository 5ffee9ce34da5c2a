import { page } from '../interactions/views.js';
import { markup, translated, type SafeHtml } from '../ui/html.js';
import type { Ui } from '../ui/index.js';

/** The sign-up pages (README "Sign-up"); every text from the `signup` namespace, HTML-safe. */

const csrfField = (csrf: string) => markup`<input type="hidden" name="csrf" value="${csrf}">`;
const interactionField = (interaction: string | undefined) =>
  interaction ? markup`<input type="hidden" name="interaction" value="${interaction}">` : '';
const errorLine = (error: SafeHtml | undefined) =>
  error ? markup`<p class="error" role="alert">${error}</p>` : '';
const backLink = (ui: Ui, interaction: string | undefined) =>
  interaction
    ? markup`<p class="muted"><a href="/interaction/${interaction}">${translated(ui.t)('signup:backToSignIn')}</a></p>`
    : '';

export function signupPage(
  ui: Ui,
  input: { csrf: string; interaction?: string | undefined; email?: string; error?: SafeHtml },
): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('signup:title'),
    markup`<p class="muted">${t('signup:intro', { product: ui.brand.productName })}</p>
${errorLine(input.error)}
<form method="post" action="/signup" autocomplete="on">
${csrfField(input.csrf)}${interactionField(input.interaction)}
<label for="email">${t('signup:email')}</label>
<input id="email" type="email" name="email" required autofocus maxlength="320" autocomplete="email" value="${input.email ?? ''}">
<label for="password">${t('signup:password')}</label>
<input id="password" type="password" name="password" required minlength="8" autocomplete="new-password" aria-describedby="password-hint">
<p id="password-hint" class="muted">${t('signup:passwordHint')}</p>
<button type="submit">${t('signup:submit')}</button>
</form>
${backLink(ui, input.interaction)}`,
  );
}

export const closedPage = (ui: Ui) => {
  const t = translated(ui.t);
  return page(ui, t('signup:closedTitle'), markup`<p>${t('signup:closed')}</p>`);
};

export function messagePage(
  ui: Ui,
  title: SafeHtml,
  message: SafeHtml,
  interaction?: string,
): SafeHtml {
  return page(ui, title, markup`<p>${message}</p>${backLink(ui, interaction)}`);
}

export function verifyPage(
  ui: Ui,
  input: { csrf: string; token: string; email: string; interaction?: string | undefined },
): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    t('signup:verifyTitle'),
    markup`<p>${t('signup:verify', { email: input.email })}</p>
<form method="post" action="/signup/verify">
${csrfField(input.csrf)}${interactionField(input.interaction)}
<input type="hidden" name="token" value="${input.token}">
<button type="submit">${t('signup:verifySubmit')}</button>
</form>`,
  );
}

export function verifiedPage(ui: Ui, interaction: string | undefined): SafeHtml {
  const t = translated(ui.t);
  const next = interaction
    ? markup`<p><a href="/interaction/${interaction}">${t('signup:continueSignIn')}</a></p>`
    : '';
  return page(ui, t('signup:verifiedTitle'), markup`<p>${t('signup:verified')}</p>${next}`);
}

/** The address form of a new link: alone, or under an expired link's notice. */
export function resendPage(
  ui: Ui,
  input: { csrf: string; interaction?: string | undefined; expired?: boolean; error?: SafeHtml },
): SafeHtml {
  const t = translated(ui.t);
  return page(
    ui,
    input.expired ? t('signup:invalidLinkTitle') : t('signup:resendTitle'),
    markup`<p>${input.expired ? t('signup:invalidLink') : t('signup:resendIntro')}</p>
${errorLine(input.error)}
<form method="post" action="/signup/resend">
${csrfField(input.csrf)}${interactionField(input.interaction)}
<label for="email">${t('signup:email')}</label>
<input id="email" type="email" name="email" required maxlength="320" autocomplete="email">
<button type="submit">${t('signup:resendSubmit')}</button>
</form>`,
  );
}
