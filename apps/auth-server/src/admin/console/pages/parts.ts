import type { Context } from 'koa';
import { escapeHtml } from '../../../identity/ui/html.js';
import type { AdminAnswer } from '../admin-api.js';
import { apiError, type ConsoleRequest } from '../kit.js';

// Pieces more than one section's pages are built of.

/** Checkboxes of the roles of GET /admin/roles, `checked` ticked. */
export async function roleBoxes(c: ConsoleRequest, checked: readonly string[]): Promise<string> {
  const answer = await c.api.get<{ items: { name: string; description?: string | null }[] }>(
    '/admin/roles',
  );
  const roles = answer.ok ? answer.body.items : [];
  return roles
    .map(
      (r) =>
        `<label><input type="checkbox" name="roles" value="${escapeHtml(r.name)}"${checked.includes(r.name) ? ' checked' : ''}> ${escapeHtml(r.name)}${r.description ? ` <span class="muted">${escapeHtml(r.description)}</span>` : ''}</label>`,
    )
    .join('');
}

/** An admin API refusal of an action, with the way back. */
export function refused(
  c: ConsoleRequest,
  section: 'clients' | 'users',
  answer: AdminAnswer<unknown>,
  back: string,
): void {
  c.render(
    c.ui.t(`console:${section}.notDone`),
    `${apiError(answer)}<p><a href="${escapeHtml(back)}">${c.ui.t(`console:${section}.back`)}</a></p>`,
    { section, status: answer.status >= 400 && answer.status < 500 ? answer.status : 502 },
  );
}

/** A list section's page (clients, users): its search, a link to create one, and the table. */
export function listPage(
  c: ConsoleRequest,
  section: 'clients' | 'users',
  list: { q: string; columns: readonly string[]; rows: readonly string[]; after?: string },
): void {
  const t = (key: string) => c.ui.t(`console:${section}.${key}`);
  const table =
    list.rows.length === 0
      ? `<p class="muted">${t('none')}</p>`
      : `<table><thead><tr>${list.columns.map((column) => `<th>${column}</th>`).join('')}</tr></thead>
<tbody>${list.rows.join('\n')}</tbody></table>`;
  c.render(
    c.ui.t(`console:nav.${section}`),
    `${c.notice()}
<form method="get" action="/console/${section}" class="inline" role="search">
<label>${t('search')}<br><input type="search" name="q" value="${escapeHtml(list.q)}"></label>
<button type="submit">${t('searchButton')}</button></form>
<p><a href="/console/${section}/new">${t('new')}</a></p>
${table}${list.after ?? ''}`,
    { section },
  );
}

/** The list's search term (`?q=`), trimmed. */
export const searchTerm = (ctx: Context) =>
  typeof ctx.query['q'] === 'string' ? ctx.query['q'].trim() : '';
