import type { Context } from 'koa';
import { joinHtml, markup, type SafeHtml } from '../../../identity/ui/html.js';
import { seg } from '../admin-api.js';
import { CONSOLE_PATH } from '../client.js';
import { apiError, consoleOf, formOf, type ConsolePages, type ConsoleRequest } from '../kit.js';
import {
  APIS,
  apiUrl,
  listResources,
  permissionLines,
  settingsFields,
  settingsOfForm,
  settingsOfResource,
  ttlOf,
  type ResourceView,
} from './resource-forms.js';

/** What the API page needs of GET /admin/roles: who grants which permission. */
interface RoleGrants {
  name: string;
  grants: { resourceId: string; permissions: string[] }[];
}

/** An admin API refusal and the form of the API's page it concerns. */
interface Refusal {
  problem: SafeHtml;
  where: 'settings' | 'permissions' | 'delete';
  status: number;
}

const builtInMark = (c: ConsoleRequest) =>
  markup` <span class="muted nowrap">${c.t('console:apis.builtIn')}</span>`;

/** /console/apis (docs/console.md "APIs"): the registered APIs, their settings and permissions. */
export function resourcePages({ router, form }: ConsolePages): void {
  async function showList(
    ctx: Context,
    problem: SafeHtml | '' = '',
    status = 200,
    entered: Record<string, string> = {},
  ) {
    const c = consoleOf(ctx);
    const answer = await listResources(c);
    if (!answer.ok) {
      return c.render(c.t('console:nav.apis'), apiError(answer), { status: 502, section: 'apis' });
    }
    const rows = answer.body.items.map(
      (
        r,
      ) => markup`<tr><td><a href="${apiUrl(r.id)}">${r.name}</a>${r.builtIn ? builtInMark(c) : ''}</td>
<td class="wrap"><code>${r.identifier}</code></td><td>${r.permissions.length}</td></tr>`,
    );
    const table =
      rows.length === 0
        ? markup`<p class="muted">${c.t('console:apis.none')}</p>`
        : markup`<table><thead><tr><th>${c.t('console:apis.name')}</th><th>${c.t('console:apis.identifier')}</th><th>${c.t('console:apis.permissionCount')}</th></tr></thead>
<tbody>${joinHtml(rows, '\n')}</tbody></table>`;
    const v = (name: string) => entered[name] ?? '';
    c.render(
      c.t('console:nav.apis'),
      markup`${c.notice()}
<p class="muted">${c.t('console:apis.explain')}</p>
${table}
<h2>${c.t('console:apis.new')}</h2>
${problem}
<form method="post" action="${APIS}">${c.csrfField}
<label for="api-identifier">${c.t('console:apis.identifier')}</label>
<input type="text" id="api-identifier" name="identifier" required maxlength="2000" value="${v('identifier')}">
<p class="muted">${c.t('console:apis.identifierHint')}</p>
<label for="api-name">${c.t('console:apis.name')}</label>
<input type="text" id="api-name" name="name" required maxlength="100" value="${v('name')}">
<label for="api-permissions">${c.t('console:apis.permissionLines')}</label>
<textarea id="api-permissions" name="permissions">${v('permissions')}</textarea>
${settingsFields(c, settingsOfForm(entered))}
<button type="submit">${c.t('console:apis.create')}</button></form>`,
      { status, section: 'apis' },
    );
  }

  /** An API's page; a refusal is shown above the form (`where`) whose values it refused. */
  async function showApi(ctx: Context, id: string, refusal?: Refusal) {
    const c = consoleOf(ctx);
    const { t } = c;
    const [answer, roles] = await Promise.all([
      c.api.get<ResourceView>(`/admin/resources/${seg(id)}`),
      c.api.get<{ items: RoleGrants[] }>('/admin/roles'),
    ]);
    if (!answer.ok) {
      const message =
        answer.status === 404
          ? markup`<p class="error" role="alert">${t('console:apis.notFound')}</p>`
          : apiError(answer);
      return c.render(
        t('console:nav.apis'),
        markup`${message}<p><a href="${APIS}">${t('console:apis.back')}</a></p>`,
        { status: answer.status === 404 ? 404 : 502, section: 'apis' },
      );
    }
    const r = answer.body;
    const url = apiUrl(r.id);
    const entered = formOf(ctx);
    const problemAt = (where: Refusal['where']) =>
      refusal?.where === where ? refusal.problem : '';
    const refusedSettings = refusal?.where === 'settings';
    const settings = refusedSettings ? settingsOfForm(entered) : settingsOfResource(r);
    const name = refusedSettings ? (entered['name'] ?? '') : r.name;
    const identifier = refusedSettings ? (entered['identifier'] ?? '') : r.identifier;
    const adding = refusal?.where === 'permissions' && entered['add'] ? entered : {};

    const grantedBy = (permission: string) =>
      joinHtml(
        (roles.ok ? roles.body.items : [])
          .filter((role) =>
            role.grants.some((g) => g.resourceId === r.id && g.permissions.includes(permission)),
          )
          .map(
            (role) =>
              markup`<a href="${CONSOLE_PATH}/roles/${encodeURIComponent(role.name)}"><code>${role.name}</code></a>`,
          ),
        ', ',
      );
    const rows = r.permissions.map(
      (p) => markup`<tr><td><code>${p.name}</code></td>
<td><form method="post" action="${url}/permissions">${c.csrfField}<input type="hidden" name="name" value="${p.name}">
<input type="text" name="description" maxlength="200" aria-label="${t('console:apis.descriptionOf', { name: p.name })}" value="${p.description}">
<button type="submit">${t('console:apis.describe')}</button></form></td>
<td>${grantedBy(p.name)}</td>
<td><form method="post" action="${url}/permissions/delete">${c.csrfField}<input type="hidden" name="name" value="${p.name}">
<button type="submit" class="danger" aria-label="${t('console:apis.removePermissionOf', { name: p.name })}">${t('console:apis.removePermission')}</button></form></td></tr>`,
    );
    const permissions =
      rows.length === 0
        ? markup`<p class="muted">${t('console:apis.noPermissions')}</p>`
        : markup`<table><thead><tr><th>${t('console:apis.name')}</th><th>${t('console:apis.description')}</th><th>${t('console:apis.grantedBy')}</th><th></th></tr></thead>
<tbody>${joinHtml(rows, '\n')}</tbody></table>
<p class="muted">${t('console:apis.removeExplain')}</p>`;
    const identifierField = r.builtIn
      ? markup`<p><code>${r.identifier}</code></p><p class="muted">${t('console:apis.builtInIdentifier')}</p>`
      : markup`<input type="text" id="api-identifier" name="identifier" required maxlength="2000" value="${identifier}">
<p class="muted">${t('console:apis.identifierHint')}</p>`;
    const remove = r.builtIn
      ? markup`<p class="muted">${t('console:apis.builtInKept')}</p>`
      : markup`<h2>${t('console:apis.delete')}</h2>${problemAt('delete')}
<p class="muted">${t('console:apis.deleteExplain')}</p>
<form method="post" action="${url}/delete">${c.csrfField}
<button type="submit" class="danger">${t('console:apis.deleteButton', { name: r.name })}</button></form>`;

    c.render(
      t('console:apis.title', { name: r.name }),
      markup`${c.notice()}
<p><a href="${APIS}">${t('console:apis.back')}</a></p>
<h2>${t('console:apis.settings')}</h2>${problemAt('settings')}
<form method="post" action="${url}">${c.csrfField}
<label for="api-name">${t('console:apis.name')}</label>
<input type="text" id="api-name" name="name" required maxlength="100" value="${name}">
<label for="api-identifier">${t('console:apis.identifier')}</label>
${identifierField}
${settingsFields(c, settings)}
<button type="submit">${t('console:apis.save')}</button></form>
<h2>${t('console:apis.permissions')}</h2>${problemAt('permissions')}
${permissions}
<h3>${t('console:apis.addPermission')}</h3>
<form method="post" action="${url}/permissions" class="inline">${c.csrfField}<input type="hidden" name="add" value="1">
<label>${t('console:apis.permissionName')}<br><input type="text" name="name" required maxlength="81" value="${adding['name'] ?? ''}"></label>
<label>${t('console:apis.description')}<br><input type="text" name="description" maxlength="200" value="${adding['description'] ?? ''}"></label>
<button type="submit">${t('console:apis.add')}</button></form>
${remove}`,
      { status: refusal?.status ?? 200, section: 'apis' },
    );
  }

  router.get(APIS, (ctx) => showList(ctx));

  router.post(APIS, form, async function createApi(ctx) {
    const c = consoleOf(ctx);
    const entered = formOf(ctx);
    const permissions = permissionLines(entered['permissions'] ?? '');
    const ttl = ttlOf(entered['accessTokenTtl'] ?? '');
    const settings = settingsOfForm(entered);
    const answer = await c.api.send<ResourceView>('POST', '/admin/resources', {
      identifier: (entered['identifier'] ?? '').trim(),
      name: (entered['name'] ?? '').trim(),
      ...(permissions.length > 0 ? { permissions } : {}),
      ...(ttl === null ? {} : { accessTokenTtl: ttl }),
      ...(settings.signingAlg ? { signingAlg: settings.signingAlg } : {}),
      dpopRequired: settings.dpopRequired,
      followsDenyList: settings.followsDenyList,
    });
    if (!answer.ok) return showList(ctx, apiError(answer), answer.status, entered);
    c.redirect(apiUrl(answer.body.id), 'apiCreated');
  });

  router.get(`${APIS}/:id`, (ctx) => showApi(ctx, ctx.params['id']!));

  router.post(`${APIS}/:id`, form, async function saveApi(ctx) {
    const c = consoleOf(ctx);
    const id = ctx.params['id']!;
    const entered = formOf(ctx);
    const settings = settingsOfForm(entered);
    const answer = await c.api.send('PATCH', `/admin/resources/${seg(id)}`, {
      name: (entered['name'] ?? '').trim(),
      // The built-in API's form has no identifier: API_AUDIENCE is configuration.
      ...('identifier' in entered ? { identifier: entered['identifier']!.trim() } : {}),
      accessTokenTtl: ttlOf(settings.accessTokenTtl),
      signingAlg: settings.signingAlg || null,
      dpopRequired: settings.dpopRequired,
      followsDenyList: settings.followsDenyList,
    });
    if (!answer.ok) {
      return showApi(ctx, id, {
        problem: apiError(answer),
        where: 'settings',
        status: answer.status,
      });
    }
    c.redirect(apiUrl(id), 'apiSaved');
  });

  router.post(`${APIS}/:id/permissions`, form, async function putPermission(ctx) {
    const c = consoleOf(ctx);
    const id = ctx.params['id']!;
    const { name = '', description = '' } = formOf(ctx);
    const answer = await c.api.send(
      'PUT',
      `/admin/resources/${seg(id)}/permissions/${seg(name.trim())}`,
      { description: description.trim() },
    );
    if (!answer.ok) {
      const problem = apiError(answer);
      return showApi(ctx, id, { problem, where: 'permissions', status: answer.status });
    }
    c.redirect(apiUrl(id), 'permissionSaved');
  });

  router.post(`${APIS}/:id/permissions/delete`, form, async function removePermission(ctx) {
    const c = consoleOf(ctx);
    // Every role that grants it loses it.
    if (!c.requireFresh()) return;
    const id = ctx.params['id']!;
    const name = formOf(ctx)['name'] ?? '';
    const answer = await c.api.send(
      'DELETE',
      `/admin/resources/${seg(id)}/permissions/${seg(name)}`,
    );
    if (!answer.ok) {
      const problem = apiError(answer);
      return showApi(ctx, id, { problem, where: 'permissions', status: answer.status });
    }
    c.redirect(apiUrl(id), 'permissionRemoved');
  });

  router.post(`${APIS}/:id/delete`, form, async function deleteApi(ctx) {
    const c = consoleOf(ctx);
    if (!c.requireFresh()) return;
    const id = ctx.params['id']!;
    // The built-in API is refused (409): the page says why.
    const answer = await c.api.send('DELETE', `/admin/resources/${seg(id)}`);
    if (!answer.ok) {
      return showApi(ctx, id, {
        problem: apiError(answer),
        where: 'delete',
        status: answer.status,
      });
    }
    c.redirect(APIS, 'apiDeleted');
  });
}
