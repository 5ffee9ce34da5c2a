import type { Context } from 'koa';
import { joinHtml, markup, type SafeHtml } from '../../../identity/ui/html.js';
import { seg } from '../admin-api.js';
import { CONSOLE_PATH } from '../client.js';
import { apiUrl, listResources, type ResourceView } from './resource-forms.js';
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
  description: string | null;
  builtIn: boolean;
  /** Every API the role grants something on, the built-in one included. */
  grants: { resource: string; resourceId: string; permissions: string[] }[];
}

const ROLES = `${CONSOLE_PATH}/roles`;
const roleUrl = (name: string) => `${ROLES}/${encodeURIComponent(name)}`;

/** A checkbox's value: the API's id, a space, the permission (a permission's name has no space). */
const grantKey = (resourceId: string, permission: string) => `${resourceId} ${permission}`;

const grantKeys = (role: Role) =>
  new Set(role.grants.flatMap((g) => g.permissions.map((p) => grantKey(g.resourceId, p))));

/** One fieldset per registered API, its permissions as checkboxes, `checked` ticked. */
function grantBoxes(
  c: ConsoleRequest,
  resources: readonly ResourceView[],
  checked: ReadonlySet<string>,
): SafeHtml {
  const groups = resources.map((r) => {
    const boxes =
      r.permissions.length === 0
        ? markup`<p class="muted">${c.t('console:roles.noPermissions')} <a href="${apiUrl(r.id)}">${c.t('console:roles.addPermissions')}</a></p>`
        : r.permissions.map((p) => {
            const key = grantKey(r.id, p.name);
            return markup`<label><input type="checkbox" name="grant" value="${key}"${checked.has(key) ? ' checked' : ''}> <code>${p.name}</code>${p.description ? markup` <span class="muted">${p.description}</span>` : ''}</label>`;
          });
    // `shown`: the APIs this form listed, so a save replaces only what the administrator saw.
    return markup`<fieldset class="checks"><legend>${r.name} <code>${r.identifier}</code></legend><input type="hidden" name="shown" value="${r.id}">${boxes}</fieldset>`;
  });
  return markup`<p>${c.t('console:roles.byApi')}</p>${groups}`;
}

/**
 * The PUT's `grants`, one for every registered API: what the form ticked on the APIs it showed;
 * on an API registered since the form was sent, what the role grants there now.
 */
function grantsOfForm(ctx: Context, resources: readonly ResourceView[], current?: Role) {
  const ticked = formValues(ctx, 'grant');
  const shown = new Set(formValues(ctx, 'shown'));
  return resources.map((r) => ({
    resource: r.identifier,
    permissions: shown.has(r.id)
      ? ticked.filter((k) => k.startsWith(`${r.id} `)).map((k) => k.slice(r.id.length + 1))
      : (current?.grants.find((g) => g.resourceId === r.id)?.permissions ?? []),
  }));
}

/** A role's grants for the list: each API's name, then its permissions, one API a line. */
function grantList(role: Role, resources: readonly ResourceView[]): SafeHtml | string {
  const held = role.grants.filter((g) => g.permissions.length > 0);
  if (held.length === 0) return '—';
  return markup`${held.map((g, i) => {
    const name = resources.find((r) => r.id === g.resourceId)?.name ?? g.resource;
    const permissions = joinHtml(
      g.permissions.map((p) => markup`<code>${p}</code>`),
      ', ',
    );
    return markup`${i > 0 ? markup`<br>` : ''}<span class="nowrap">${name}:</span> ${permissions}`;
  })}`;
}

/** /console/roles (docs/roles.md): roles as data, each grant a permission some API registered. */
export function rolePages({ router, form }: ConsolePages): void {
  async function showList(
    ctx: Context,
    problem: SafeHtml | '' = '',
    status = 200,
    entered: { name?: string; description?: string; checked?: ReadonlySet<string> } = {},
  ) {
    const c = consoleOf(ctx);
    const [roles, resources] = await Promise.all([
      c.api.get<{ items: Role[] }>('/admin/roles'),
      listResources(c),
    ]);
    if (!roles.ok || !resources.ok) {
      const answer = roles.ok ? resources : roles;
      return c.render(c.t('console:nav.roles'), apiError(answer), {
        status: 502,
        section: 'roles',
      });
    }
    const apis = resources.body.items;
    const rows = roles.body.items.map(
      (r) => markup`<tr>
<td><a href="${roleUrl(r.name)}"><code>${r.name}</code></a>${r.builtIn ? markup` <span class="muted nowrap">${c.t('console:roles.builtIn')}</span>` : ''}</td>
<td>${r.description ?? ''}</td>
<td>${grantList(r, apis)}</td>
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
${grantBoxes(c, apis, entered.checked ?? new Set())}
<button type="submit">${c.t('console:roles.create')}</button></form>`,
      { status, section: 'roles' },
    );
  }

  /** A role's page; after a refused save, `checked` keeps what the administrator ticked. */
  async function showRole(
    ctx: Context,
    name: string,
    problem: SafeHtml | '' = '',
    status = 200,
    checked?: ReadonlySet<string>,
  ) {
    const c = consoleOf(ctx);
    const [role, resources] = await Promise.all([
      c.api.get<Role>(`/admin/roles/${seg(name)}`),
      listResources(c),
    ]);
    if (!role.ok || !resources.ok) {
      const answer = role.ok ? resources : role;
      return c.render(
        c.t('console:nav.roles'),
        markup`${apiError(answer)}<p><a href="${ROLES}">${c.t('console:roles.back')}</a></p>`,
        { status: answer.status === 404 && !role.ok ? 404 : 502, section: 'roles' },
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
${grantBoxes(c, resources.body.items, checked ?? grantKeys(r))}
<button type="submit">${c.t('console:roles.save')}</button></form>
${remove}`,
      { status, section: 'roles' },
    );
  }

  router.get(ROLES, (ctx) => showList(ctx));

  router.post(ROLES, form, async function createRole(ctx) {
    const c = consoleOf(ctx);
    const { name = '', description = '' } = formOf(ctx);
    const entered = { name, description, checked: new Set(formValues(ctx, 'grant')) };
    // PUT replaces: a create must not overwrite a role of the same name.
    const [existing, resources] = await Promise.all([
      c.api.get(`/admin/roles/${seg(name)}`),
      listResources(c),
    ]);
    if (existing.ok) {
      const problem = markup`<div class="error" role="alert"><p>${c.t('console:roles.exists', { name })}</p></div>`;
      return showList(ctx, problem, 409, entered);
    }
    if (!resources.ok) return showList(ctx, apiError(resources), 502, entered);
    const answer = await c.api.send('PUT', `/admin/roles/${seg(name)}`, {
      grants: grantsOfForm(ctx, resources.body.items),
      ...(description ? { description } : {}),
    });
    if (!answer.ok) return showList(ctx, apiError(answer), answer.status, entered);
    c.redirect(ROLES, 'roleCreated');
  });

  router.get(`${ROLES}/:name`, (ctx) => showRole(ctx, ctx.params['name']!));

  router.post(`${ROLES}/:name`, form, async function saveRole(ctx) {
    const c = consoleOf(ctx);
    const name = ctx.params['name']!;
    const checked = new Set(formValues(ctx, 'grant'));
    const [role, resources] = await Promise.all([
      c.api.get<Role>(`/admin/roles/${seg(name)}`),
      listResources(c),
    ]);
    // A role deleted since the form was sent stays deleted (PUT would make it again).
    if (!role.ok) return showRole(ctx, name);
    if (!resources.ok) return showRole(ctx, name, apiError(resources), 502, checked);
    const answer = await c.api.send('PUT', `/admin/roles/${seg(name)}`, {
      grants: grantsOfForm(ctx, resources.body.items, role.body),
      description: formOf(ctx)['description'] ?? '',
    });
    if (!answer.ok) return showRole(ctx, name, apiError(answer), answer.status, checked);
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
