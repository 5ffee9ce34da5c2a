import type { Passkey } from '../../data/passkeys-repo.js';
import { markup, joinHtml, translated, type SafeHtml } from '../ui/html.js';
import type { Ui } from '../ui/index.js';
import { PASSKEY_NAME_MAX } from './passkeys.js';

/** The one script of the auth server's pages (public/passkeys.js), loaded under script-src 'self'. */
export const PASSKEY_SCRIPT_PATH = '/passkeys.js';
export const passkeyScriptTag = markup`<script type="module" src="${PASSKEY_SCRIPT_PATH}"></script>`;

/** A passkey form: the page script fetches options, asks the browser, submits `response`. */
function passkeyForm(
  ui: Ui,
  input: {
    kind: 'sign-in' | 'register';
    action: string;
    optionsAction: string;
    csrf: string;
    /** HTML-safe text (a `translated(ui.t)(…)` result). */
    label: SafeHtml;
    fields?: SafeHtml;
  },
): SafeHtml {
  const t = translated(ui.t);
  // The script is static: its messages come in the page's language as data attributes. The
  // button is enabled by the script: a click before it runs would post an empty assertion.
  const messages = (['unsupported', 'cancelled', 'failed', 'none'] as const).map(
    (m) => markup` data-msg-${m}="${t(`mfa:passkey.script.${m}`)}"`,
  );
  return markup`<form method="post" action="${input.action}" data-passkey="${input.kind}" data-options="${input.optionsAction}">
<input type="hidden" name="csrf" value="${input.csrf}">
<input type="hidden" name="response" value="">${input.fields}
<button type="submit" disabled>${input.label}</button>
<p class="error" role="alert" data-passkey-error${messages} hidden></p>
</form>`;
}

/** "Sign in with a passkey" (login page) or "Use a passkey" (second-factor step); `label` HTML-safe. */
export function passkeySignInForm(ui: Ui, uid: string, csrf: string, label: SafeHtml): SafeHtml {
  return passkeyForm(ui, {
    kind: 'sign-in',
    action: `/interaction/${uid}/passkey`,
    optionsAction: `/interaction/${uid}/passkey/options`,
    csrf,
    label,
  });
}

const when = (ui: Ui, d: Date | null) =>
  d ? d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : ui.t('accountPage:passkeys.never');

/** The account page's passkeys, each with rename and remove; then "Add a passkey". */
export function passkeysSection(ui: Ui, passkeys: Passkey[], csrf: string): SafeHtml {
  const t = translated(ui.t);
  const csrfField = markup`<input type="hidden" name="csrf" value="${csrf}">`;
  const items = passkeys.map((p) => {
    const base = `/account/passkeys/${encodeURIComponent(p.id)}`;
    const added = t('accountPage:passkeys.added', {
      added: when(ui, p.createdAt),
      used: when(ui, p.lastUsedAt),
    });
    return markup`<li data-passkey-id="${p.id}"><strong>${p.name}</strong>
<span class="muted">${added}${p.backedUp ? t('accountPage:passkeys.synced') : ''}</span>
<form method="post" action="${base}/rename">${csrfField}
<label>${t('accountPage:passkeys.newName')} <input type="text" name="name" maxlength="${PASSKEY_NAME_MAX}" required value="${p.name}"></label>
<button type="submit">${t('accountPage:passkeys.rename')}</button></form>
<form method="post" action="${base}/delete">${csrfField}<button type="submit">${t('accountPage:passkeys.remove')}</button></form></li>`;
  });
  const list =
    passkeys.length > 0
      ? markup`<ul>${joinHtml(items, '\n')}</ul>`
      : markup`<p class="muted">${t('accountPage:passkeys.none')}</p>`;
  const add = passkeyForm(ui, {
    kind: 'register',
    action: '/account/passkeys',
    optionsAction: '/account/passkeys/options',
    csrf,
    label: t('accountPage:passkeys.add'),
    fields: markup`\n<label for="passkey-name">${t('accountPage:passkeys.nameOfNew')}</label>
<input id="passkey-name" type="text" name="name" maxlength="${PASSKEY_NAME_MAX}" placeholder="${t('accountPage:passkeys.namePlaceholder')}">`,
  });
  return markup`<section id="passkeys"><h2>${t('accountPage:passkeys.title')}</h2>
${list}
${add}
${passkeyScriptTag}
</section>`;
}

/** "Add a passkey" on the factor page, for a user asked for a second factor who has none. */
export function passkeySetupForm(ui: Ui, uid: string, csrf: string): SafeHtml {
  const t = translated(ui.t);
  return passkeyForm(ui, {
    kind: 'register',
    action: `/interaction/${uid}/passkey/register`,
    optionsAction: `/interaction/${uid}/passkey/register/options`,
    csrf,
    label: t('mfa:passkey.addTitle'),
    fields: markup`\n<input type="hidden" name="name" value="${t('mfa:passkey.defaultName')}">`,
  });
}

/** The login page's "Sign in with a passkey" (no email typed: a discoverable credential). */
export function passkeySignIn(ui: Ui, uid: string, csrf: string): SafeHtml {
  const t = translated(ui.t);
  return markup`<p class="muted">${t('signin:or')}</p>\n${passkeySignInForm(ui, uid, csrf, t('signin:withPasskey'))}\n${passkeyScriptTag}`;
}
