import type { Context } from 'koa';
import { joinHtml, markup, type SafeHtml } from '../../../identity/ui/html.js';
import type { AdminAnswer } from '../admin-api.js';
import { apiError, type ConsoleRequest } from '../kit.js';

// Pieces more than one section's pages are built of.

/** Checkboxes of the roles of GET /admin/roles, `checked` ticked. */
export async function roleBoxes(c: ConsoleRequest, checked: readonly string[]): Promise<SafeHtml> {
  const answer = await c.api.get<{ items: { name: string; description?: string | null }[] }>(
    '/admin/roles',
  );
  const roles = answer.ok ? answer.body.items : [];
  return joinHtml(
    roles.map(
      (r) =>
        markup`<label><input type="checkbox" name="roles" value="${r.name}"${checked.includes(r.name) ? ' checked' : ''}> ${r.name}${r.description ? markup` <span class="muted">${r.description}</span>` : ''}</label>`,
    ),
  );
}

/** An admin API refusal of an action, with the way back. */
export function refused(
  c: ConsoleRequest,
  section: 'clients' | 'users',
  answer: AdminAnswer<unknown>,
  back: string,
): void {
  c.render(
    c.t(`console:${section}.notDone`),
    markup`${apiError(answer)}<p><a href="${back}">${c.t(`console:${section}.back`)}</a></p>`,
    { section, status: answer.status >= 400 && answer.status < 500 ? answer.status : 502 },
  );
}

/** A list section's page (clients, users): its search, a link to create one, and the table. */
export function listPage(
  c: ConsoleRequest,
  section: 'clients' | 'users',
  list: {
    q: string;
    columns: readonly (SafeHtml | string)[];
    rows: readonly SafeHtml[];
    after?: SafeHtml | '';
  },
): void {
  const t = (key: string) => c.t(`console:${section}.${key}`);
  const table =
    list.rows.length === 0
      ? markup`<p class="muted">${t('none')}</p>`
      : markup`<table><thead><tr>${list.columns.map((column) => markup`<th>${column}</th>`)}</tr></thead>
<tbody>${joinHtml(list.rows, '\n')}</tbody></table>`;
  c.render(
    c.t(`console:nav.${section}`),
    markup`${c.notice()}
<form method="get" action="/console/${section}" class="inline" role="search">
<label>${t('search')}<br><input type="search" name="q" value="${list.q}"></label>
<button type="submit">${t('searchButton')}</button></form>
<p><a href="/console/${section}/new">${t('new')}</a></p>
${table}${list.after ?? ''}`,
    { section },
  );
}

/** The list's search term (`?q=`), trimmed. */
export const searchTerm = (ctx: Context) =>
  typeof ctx.query['q'] === 'string' ? ctx.query['q'].trim() : '';
