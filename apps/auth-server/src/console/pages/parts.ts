import { escapeHtml } from '../../interactions/views.js';
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
