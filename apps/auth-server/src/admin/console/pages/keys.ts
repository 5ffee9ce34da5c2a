import type { Context } from 'koa';
import { escapeHtml } from '../../../identity/ui/html.js';
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
  async function showKeys(ctx: Context, problem = '', status = 200) {
    const c = consoleOf(ctx);
    const answer = await c.api.get<{ items: SigningKey[] }>('/admin/signing-keys');
    if (!answer.ok) return c.render(c.ui.t('console:nav.keys'), apiError(answer), { status: 502 });
    const now = Date.now();
    const rows = answer.body.items
      .map((k) => {
        const activates = Date.parse(k.activates_at);
        const state =
          k.status === 'next'
            ? `${c.ui.t('console:keys.state.next')} <span class="muted">${c.ui.t('console:keys.signsIn', { time: durationText(c.ui, activates - now) })}</span>`
            : c.ui.t(`console:keys.state.${k.status}`);
        const retire =
          k.status === 'expired'
            ? ''
            : `<form method="post" action="${KEYS}/${seg(k.kid)}/retire">${c.csrfField}<button type="submit" class="danger">${c.ui.t('console:keys.retire')}</button></form>`;
        return `<tr data-kid="${escapeHtml(k.kid)}" data-status="${escapeHtml(k.status)}">
<td class="wrap"><code>${escapeHtml(k.kid)}</code></td><td>${escapeHtml(k.alg)}</td><td>${state}</td>
<td>${k.signs.length > 0 ? k.signs.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ') : `<span class="muted">${c.ui.t('console:keys.verifyOnly')}</span>`}</td>
<td>${timeHtml(k.created_at)}</td><td>${timeHtml(k.activates_at)}</td><td>${timeHtml(k.retired_at)}</td><td>${timeHtml(k.published_until)}</td>
<td>${durationText(c.ui, now - Date.parse(k.created_at))}</td><td>${retire}</td></tr>`;
      })
      .join('');
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
    ]
      .map((h) => `<th>${c.ui.t(`console:keys.column.${h}`)}</th>`)
      .join('');
    c.render(
      c.ui.t('console:nav.keys'),
      `${c.notice()}${problem}
<table><thead><tr>${heads}<th></th></tr></thead><tbody>${rows}</tbody></table>
<p class="muted">${c.ui.t('console:keys.retireExplain')}</p>
<h2>${c.ui.t('console:keys.rotateTitle')}</h2>
<p>${c.ui.t('console:keys.lead')}</p>
<form method="post" action="${KEYS}/rotate" class="inline">${c.csrfField}
<label>${c.ui.t('console:keys.alg')} <select name="alg">${ALGS.map((a) => `<option>${a}</option>`).join('')}</select></label>
<button type="submit">${c.ui.t('console:keys.rotate')}</button></form>`,
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
