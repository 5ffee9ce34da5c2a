import type { Passkey } from '../data/passkeys-repo.js';
import { escapeHtml } from '../interactions/views.js';
import { PASSKEY_NAME_MAX } from './passkeys.js';

/** The one script of the auth server's pages (public/passkeys.js), loaded under script-src 'self'. */
export const PASSKEY_SCRIPT_PATH = '/passkeys.js';
export const passkeyScriptTag = `<script type="module" src="${PASSKEY_SCRIPT_PATH}"></script>`;

/** A passkey form: the page script fetches options, asks the browser, submits `response`. */
function passkeyForm(input: {
  kind: 'sign-in' | 'register';
  action: string;
  optionsAction: string;
  csrf: string;
  label: string;
  fields?: string;
}): string {
  return `<form method="post" action="${escapeHtml(input.action)}" data-passkey="${input.kind}" data-options="${escapeHtml(input.optionsAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<input type="hidden" name="response" value="">${input.fields ?? ''}
<button type="submit">${escapeHtml(input.label)}</button>
<p class="error" role="alert" data-passkey-error hidden></p>
</form>`;
}

/** "Sign in with a passkey" (login page) or "Use a passkey" (second-factor step). */
export function passkeySignInForm(uid: string, csrf: string, label: string): string {
  return passkeyForm({
    kind: 'sign-in',
    action: `/interaction/${uid}/passkey`,
    optionsAction: `/interaction/${uid}/passkey/options`,
    csrf,
    label,
  });
}

const when = (d: Date | null) =>
  d ? d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never';

/** The account page's passkeys, each with rename and remove; then "Add a passkey". */
export function passkeysSection(passkeys: Passkey[], csrf: string): string {
  const csrfField = `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;
  const items = passkeys
    .map((p) => {
      const base = `/account/passkeys/${encodeURIComponent(p.id)}`;
      return `<li data-passkey-id="${escapeHtml(p.id)}"><strong>${escapeHtml(p.name)}</strong>
<span class="muted">added ${escapeHtml(when(p.createdAt))}, last used ${escapeHtml(when(p.lastUsedAt))}${p.backedUp ? ', synced' : ''}</span>
<form method="post" action="${escapeHtml(base)}/rename">${csrfField}
<label>New name <input type="text" name="name" maxlength="${PASSKEY_NAME_MAX}" required value="${escapeHtml(p.name)}"></label>
<button type="submit">Rename</button></form>
<form method="post" action="${escapeHtml(base)}/delete">${csrfField}<button type="submit">Remove</button></form></li>`;
    })
    .join('\n');
  return `<section id="passkeys"><h2>Passkeys</h2>
${passkeys.length > 0 ? `<ul>${items}</ul>` : '<p class="muted">No passkeys yet.</p>'}
${passkeyForm({
  kind: 'register',
  action: '/account/passkeys',
  optionsAction: '/account/passkeys/options',
  csrf,
  label: 'Add a passkey',
  fields: `\n<label for="passkey-name">Name of the new passkey</label>
<input id="passkey-name" type="text" name="name" maxlength="${PASSKEY_NAME_MAX}" placeholder="e.g. Laptop">`,
})}
${passkeyScriptTag}
</section>`;
}

/** "Add a passkey" on the factor page, for a user asked for a second factor who has none. */
export function passkeySetupForm(uid: string, csrf: string): string {
  return passkeyForm({
    kind: 'register',
    action: `/interaction/${uid}/passkey/register`,
    optionsAction: `/interaction/${uid}/passkey/register/options`,
    csrf,
    label: 'Add a passkey',
    fields: `\n<input type="hidden" name="name" value="Passkey">`,
  });
}

/** The login page's "Sign in with a passkey" (no email typed: a discoverable credential). */
export const passkeySignIn = (uid: string, csrf: string) =>
  `<p class="muted">or</p>\n${passkeySignInForm(uid, csrf, 'Sign in with a passkey')}\n${passkeyScriptTag}`;
