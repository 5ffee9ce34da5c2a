import type { Context } from 'koa';
import { joinHtml, markup, type SafeHtml } from '../../../identity/ui/html.js';
import { seg } from '../admin-api.js';
import { CONSOLE_PATH } from '../client.js';
import {
  apiError,
  consoleOf,
  formOf,
  formValues,
  type ConsolePages,
  type ConsoleRequest,
} from '../kit.js';

/** GET /admin/roles' items (docs/roles.md). */
interface Role {
  name: string;
  permissions: string[];
  description: string | null;
  builtIn: boolean;
}

const ROLES = `${CONSOLE_PATH}/roles`;
const roleUrl = (name: string) => `${ROLES}/${encodeURIComponent(name)}`;

/** The vocabulary: a role can only name these (GET /admin/permissions). */
async function vocabulary(c: ConsoleRequest): Promise<string[]> {
  const answer = await c.api.get<{ items: string[] }>('/admin/permissions');
  return answer.ok ? answer.body.items : [];
}

/** The permission checkboxes, `checked` ticked. */
function permissionBoxes(c: ConsoleRequest, permissions: string[], checked: string[]): SafeHtml {
  const boxes = permissions.map(
    (p) =>
      markup`<label><input type="checkbox" name="permissions" value="${p}"${checked.includes(p) ? ' checked' : ''}> <code>${p}</code></label>`,
  );
  return markup`<fieldset class="checks"><legend>${c.t('console:roles.permissions')}</legend>${boxes}</fieldset>`;
}

const permissionList = (permissions: string[]) =>
  permissions.length === 0
    ? '—'
    : joinHtml(
        permissions.map((p) => markup`<code>${p}</code>`),
        ', ',
      );

/** /console/roles (docs/roles.md): roles as data, each permission from the API's vocabulary. */
export function rolePages({ router, form }: ConsolePages): void {
  async function showList(
    ctx: Context,
    problem: SafeHtml | '' = '',
    status = 200,
    entered: { name?: string; description?: string; permissions?: string[] } = {},
  ) {
    const c = consoleOf(ctx);
    const [roles, permissions] = await Promise.all([
      c.api.get<{ items: Role[] }>('/admin/roles'),
      vocabulary(c),
    ]);
    if (!roles.ok) return c.render(c.t('console:nav.roles'), apiError(roles), { status: 502 });
    const rows = roles.body.items.map(
      (r) => markup`<tr>
<td><a href="${roleUrl(r.name)}"><code>${r.name}</code></a>${r.builtIn ? markup` <span class="muted nowrap">${c.t('console:roles.builtIn')}</span>` : ''}</td>
<td>${r.description ?? ''}</td>
<td>${permissionList(r.permissions)}</td>
<td><a href="${roleUrl(r.name)}">${c.t('console:roles.edit')}</a></td></tr>`,
    );
    c.render(
      c.t('console:nav.roles'),
      markup`${c.notice()}
<p class="muted">${c.t('console:roles.explain')}</p>
<table><thead><tr><th>${c.t('console:roles.name')}</th><th>${c.t('console:roles.description')}</th><th>${c.t('console:roles.permissions')}</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>
<h2>${c.t('console:roles.new')}</h2>
${problem}
<form method="post" action="${ROLES}">${c.csrfField}
<label for="role-name">${c.t('console:roles.name')}</label>
<input type="text" id="role-name" name="name" required maxlength="40" pattern="[a-z][a-z0-9_\\-]{0,39}" value="${entered.name ?? ''}">
<p class="muted">${c.t('console:roles.nameRule')}</p>
<label for="role-description">${c.t('console:roles.description')}</label>
<input type="text" id="role-description" name="description" maxlength="200" value="${entered.description ?? ''}">
${permissionBoxes(c, permissions, entered.permissions ?? [])}
<button type="submit">${c.t('console:roles.create')}</button></form>`,
      { status, section: 'roles' },
    );
  }

  async function showRole(ctx: Context, name: string, problem: SafeHtml | '' = '', status = 200) {
    const c = consoleOf(ctx);
    const [role, permissions] = await Promise.all([
      c.api.get<Role>(`/admin/roles/${seg(name)}`),
      vocabulary(c),
    ]);
    if (!role.ok) {
      return c.render(
        c.t('console:nav.roles'),
        markup`${apiError(role)}<p><a href="${ROLES}">${c.t('console:roles.back')}</a></p>`,
        { status: role.status === 404 ? 404 : 502, section: 'roles' },
      );
    }
    const r = role.body;
    const remove = r.builtIn
      ? markup`<p class="muted">${c.t('console:roles.builtInKept')}</p>`
      : markup`<h2>${c.t('console:roles.delete')}</h2>
<p class="muted">${c.t('console:roles.deleteExplain')}</p>
<form method="post" action="${roleUrl(r.name)}/delete">${c.csrfField}
<button type="submit" class="danger">${c.t('console:roles.deleteButton', { name: r.name })}</button></form>`;
    c.render(
      c.t('console:roles.title', { name: r.name }),
      markup`${c.notice()}${problem}
<p><a href="${ROLES}">${c.t('console:roles.back')}</a></p>
<form method="post" action="${roleUrl(r.name)}">${c.csrfField}
<label for="role-description">${c.t('console:roles.description')}</label>
<input type="text" id="role-description" name="description" maxlength="200" value="${r.description ?? ''}">
${permissionBoxes(c, permissions, r.permissions)}
<button type="submit">${c.t('console:roles.save')}</button></form>
${remove}`,
      { status, section: 'roles' },
    );
  }

  router.get(ROLES, (ctx) => showList(ctx));

  router.post(ROLES, form, async function createRole(ctx) {
    const c = consoleOf(ctx);
    const { name = '', description = '' } = formOf(ctx);
    const permissions = formValues(ctx, 'permissions');
    const entered = { name, description, permissions };
    // PUT replaces: a create must not overwrite a role of the same name.
    const existing = await c.api.get(`/admin/roles/${seg(name)}`);
    if (existing.ok) {
      const problem = markup`<div class="error" role="alert"><p>${c.t('console:roles.exists', { name })}</p></div>`;
      return showList(ctx, problem, 409, entered);
    }
    const answer = await c.api.send('PUT', `/admin/roles/${seg(name)}`, {
      permissions,
      ...(description ? { description } : {}),
    });
    if (!answer.ok) return showList(ctx, apiError(answer), answer.status, entered);
    c.redirect(ROLES, 'roleCreated');
  });

  router.get(`${ROLES}/:name`, (ctx) => showRole(ctx, ctx.params['name']!));

  router.post(`${ROLES}/:name`, form, async function saveRole(ctx) {
    const c = consoleOf(ctx);
    const name = ctx.params['name']!;
    const answer = await c.api.send('PUT', `/admin/roles/${seg(name)}`, {
      permissions: formValues(ctx, 'permissions'),
      description: formOf(ctx)['description'] ?? '',
    });
    if (!answer.ok) return showRole(ctx, name, apiError(answer), answer.status);
    c.redirect(roleUrl(name), 'roleSaved');
  });

  router.post(`${ROLES}/:name/delete`, form, async function deleteRole(ctx) {
    const c = consoleOf(ctx);
    if (!c.requireFresh()) return;
    const name = ctx.params['name']!;
    // Refused while a user or client holds it, or configuration names it: the API says which.
    const answer = await c.api.send('DELETE', `/admin/roles/${seg(name)}`);
    if (!answer.ok) return showRole(ctx, name, apiError(answer), answer.status);
    c.redirect(ROLES, 'roleDeleted');
  });
}
