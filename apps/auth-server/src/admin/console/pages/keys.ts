import type { Context } from 'koa';
import { joinHtml, markup, type SafeHtml } from '../../../identity/ui/html.js';
import { seg } from '../admin-api.js';
import { CONSOLE_PATH } from '../client.js';
import { apiError, consoleOf, formOf, type ConsolePages } from '../kit.js';
import { durationText, timeHtml } from './format.js';

/** GET /admin/signing-keys' items (README "Signing-key rotation"). */
export interface SigningKey {
  kid: string;
  alg: string;
  status: 'next' | 'active' | 'retired' | 'expired';
  signs: string[];
  created_at: string;
  activates_at: string;
  retired_at: string | null;
  published_until: string | null;
}

const KEYS = `${CONSOLE_PATH}/keys`;
const ALGS = ['RS256', 'ES256'] as const;

/** /console/keys: publish before sign; rotate a key in, retire one no longer needed. */
export function keyPages({ router, form }: ConsolePages): void {
  async function showKeys(ctx: Context, problem: SafeHtml | '' = '', status = 200) {
    const c = consoleOf(ctx);
    const answer = await c.api.get<{ items: SigningKey[] }>('/admin/signing-keys');
    if (!answer.ok) return c.render(c.t('console:nav.keys'), apiError(answer), { status: 502 });
    const now = Date.now();
    const rows = answer.body.items.map((k) => {
      const activates = Date.parse(k.activates_at);
      const state =
        k.status === 'next'
          ? markup`${c.t('console:keys.state.next')} <span class="muted">${c.t('console:keys.signsIn', { time: durationText(c.ui, activates - now) })}</span>`
          : c.t(`console:keys.state.${k.status}`);
      const retire =
        k.status === 'expired'
          ? ''
          : markup`<form method="post" action="${KEYS}/${seg(k.kid)}/retire">${c.csrfField}<button type="submit" class="danger">${c.t('console:keys.retire')}</button></form>`;
      return markup`<tr data-kid="${k.kid}" data-status="${k.status}">
<td class="wrap"><code>${k.kid}</code></td><td>${k.alg}</td><td>${state}</td>
<td>${
        k.signs.length > 0
          ? joinHtml(
              k.signs.map((s) => markup`<code>${s}</code>`),
              ', ',
            )
          : markup`<span class="muted">${c.t('console:keys.verifyOnly')}</span>`
      }</td>
<td>${timeHtml(k.created_at)}</td><td>${timeHtml(k.activates_at)}</td><td>${timeHtml(k.retired_at)}</td><td>${timeHtml(k.published_until)}</td>
<td>${durationText(c.ui, now - Date.parse(k.created_at))}</td><td>${retire}</td></tr>`;
    });
    const heads = [
      'kid',
      'alg',
      'status',
      'signs',
      'created',
      'activates',
      'retired',
      'publishedUntil',
      'age',
    ].map((h) => markup`<th>${c.t(`console:keys.column.${h}`)}</th>`);
    c.render(
      c.t('console:nav.keys'),
      markup`${c.notice()}${problem}
<table><thead><tr>${heads}<th></th></tr></thead><tbody>${rows}</tbody></table>
<p class="muted">${c.t('console:keys.retireExplain')}</p>
<h2>${c.t('console:keys.rotateTitle')}</h2>
<p>${c.t('console:keys.lead')}</p>
<form method="post" action="${KEYS}/rotate" class="inline">${c.csrfField}
<label>${c.t('console:keys.alg')} <select name="alg">${ALGS.map((a) => markup`<option>${a}</option>`)}</select></label>
<button type="submit">${c.t('console:keys.rotate')}</button></form>`,
      { status, section: 'keys' },
    );
  }

  router.get(KEYS, (ctx) => showKeys(ctx));

  router.post(`${KEYS}/rotate`, form, async function rotateKey(ctx) {
    const c = consoleOf(ctx);
    if (!c.requireFresh()) return;
    const alg = formOf(ctx)['alg'];
    // Scheduled: published now, signing after SIGNING_KEY_PUBLISH_LEAD; `now` stays the CLI's.
    const answer = await c.api.send('POST', '/admin/signing-keys', {
      ...(alg ? { alg } : {}),
      activate: 'scheduled',
    });
    if (!answer.ok) return showKeys(ctx, apiError(answer), answer.status);
    c.redirect(KEYS, 'keyRotated');
  });

  router.post(`${KEYS}/:kid/retire`, form, async function retireKey(ctx) {
    const c = consoleOf(ctx);
    if (!c.requireFresh()) return;
    // The active key is refused (409): a key must be rotated in to replace it first.
    const answer = await c.api.send(
      'POST',
      `/admin/signing-keys/${seg(ctx.params['kid']!)}/retire`,
    );
    if (!answer.ok) return showKeys(ctx, apiError(answer), answer.status);
    c.redirect(KEYS, 'keyRetired');
  });
}
