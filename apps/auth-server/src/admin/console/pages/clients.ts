import type { Context } from 'koa';
import { joinHtml, markup, type SafeHtml } from '../../../identity/ui/html.js';
import { DEVICE_GRANT } from '../../../kernel/grant-types.js';
import { seg } from '../admin-api.js';
import { timeHtml } from './format.js';
import { listPage, refused, roleBoxes, searchTerm } from './parts.js';
import {
  apiError,
  consoleOf,
  formOf,
  formValues,
  type ConsolePages,
  type ConsoleRequest,
} from '../kit.js';

/** A client as GET /admin/clients lists it (publicMetadata plus created_at). */
type ClientView = Record<string, unknown> & { client_id: string };

/** The kinds the create form offers, as the admin API's metadata (README "Admin API"). */
const KINDS = {
  spa: { token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  secret: {
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
  },
  privateKeyJwt: {
    token_endpoint_auth_method: 'private_key_jwt',
    grant_types: ['authorization_code', 'refresh_token'],
  },
  device: { token_endpoint_auth_method: 'none', grant_types: ['device_code', 'refresh_token'] },
  service: {
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
  },
  native: {
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    application_type: 'native',
  },
} as const;
type Kind = keyof typeof KINDS;
const isKind = (k: string): k is Kind => Object.hasOwn(KINDS, k);

/** The form's checkboxes and the metadata each sets. */
const TOGGLES = [
  ['dpop', 'dpop_bound_access_tokens', true],
  ['par', 'require_pushed_authorization_requests', true],
  ['fapi', 'fapi', '2.0'],
  ['introspection', 'introspection', true],
  ['require_mfa', 'require_mfa', true],
] as const;
const TOGGLE_LABELS: Record<(typeof TOGGLES)[number][0], string> = {
  dpop: 'dpop',
  par: 'par',
  fapi: 'fapi',
  introspection: 'introspection',
  require_mfa: 'requireMfa',
};

/** The kind a registered client is, by its metadata (for the list). */
export function kindOf(c: Record<string, unknown>): Kind {
  const grants = Array.isArray(c['grant_types']) ? (c['grant_types'] as string[]) : [];
  const method = c['token_endpoint_auth_method'];
  if (method === 'private_key_jwt') return 'privateKeyJwt';
  if (grants.includes('client_credentials')) return 'service';
  if (c['application_type'] === 'native') return 'native';
  if (method === 'none') return grants.includes(DEVICE_GRANT) ? 'device' : 'spa';
  return 'secret';
}

/** Lines of a textarea, blank ones dropped. */
const lines = (text: string | undefined) =>
  (text ?? '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** A metadata value as text, the way String() shows it; none → ''. */
const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));

/** A metadata value for the table: lists joined, objects as JSON. */
function shown(value: unknown): SafeHtml {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return markup`${value.map((v, i) => markup`${i > 0 ? markup`<br>` : ''}<code>${v}</code>`)}`;
  }
  if (typeof value === 'object' && value !== null) {
    return markup`<code>${JSON.stringify(value)}</code>`;
  }
  return markup`<code>${text(value)}</code>`;
}

const hasSecret = (c: Record<string, unknown>) =>
  ['client_secret_basic', 'client_secret_post'].includes(String(c['token_endpoint_auth_method']));

const auditLink = (c: ConsoleRequest, id: string) =>
  markup`<a href="/console/audit?client_id=${encodeURIComponent(id)}">${c.t('console:clients.audit')}</a>`;

/** The secret, this once. */
function secretOnce(c: ConsoleRequest, secret: unknown): SafeHtml {
  return typeof secret === 'string'
    ? markup`<p class="alert" role="alert">${c.t('console:clients.result.secretOnce')}</p>
<p class="secret" id="client-secret">${secret}</p>`
    : markup`<p class="muted">${c.t('console:clients.result.noSecret')}</p>`;
}

/** /console/clients (docs/console.md "Clients"): list, create, change, rotate, delete. */
export function clientPages({ router, form }: ConsolePages): void {
  router.get('/console/clients', async function showClients(ctx) {
    const c = consoleOf(ctx);
    const q = searchTerm(ctx);
    const answer = await c.api.get<{ items: ClientView[] }>('/admin/clients', { q });
    if (!answer.ok) {
      return c.render(c.t('console:nav.clients'), apiError(answer), {
        section: 'clients',
        status: 502,
      });
    }
    const { t } = c;
    listPage(c, 'clients', {
      q,
      columns: [
        ...['id', 'name', 'kind', 'grants', 'created'].map((column) =>
          t(`console:clients.${column}`),
        ),
        '',
      ],
      rows: answer.body.items.map(
        (
          x,
        ) => markup`<tr><td><a href="/console/clients/${encodeURIComponent(x.client_id)}"><code>${x.client_id}</code></a></td>
<td>${text(x['client_name'])}</td><td>${t(`console:clients.kinds.${kindOf(x)}`)}</td>
<td>${shown(x['grant_types'] ?? [])}</td><td>${timeHtml(x['created_at'])}</td>
<td><a href="/console/audit?client_id=${encodeURIComponent(x.client_id)}">${t('console:clients.auditShort')}</a></td></tr>`,
      ),
    });
  });

  /** The create form, filled with `values` (a refused attempt's) and `problem` above it. */
  async function newClientForm(
    ctx: Context,
    values: Record<string, string>,
    roles: string[],
    problem: SafeHtml | '' = '',
    status = 200,
  ) {
    const c = consoleOf(ctx);
    const { t } = c;
    const kind = isKind(values['kind'] ?? '') ? values['kind'] : 'spa';
    const v = (name: string) => values[name] ?? '';
    const kinds = (Object.keys(KINDS) as Kind[]).map(
      (k) =>
        markup`<label><input type="radio" name="kind" value="${k}"${k === kind ? ' checked' : ''}> ${t(`console:clients.kinds.${k}`)}</label>`,
    );
    const toggles = TOGGLES.map(
      ([name]) =>
        markup`<label><input type="checkbox" name="${name}" value="1"${values[name] ? ' checked' : ''}> ${t(`console:clients.form.${TOGGLE_LABELS[name]}`)}</label>`,
    );
    c.render(
      t('console:clients.form.title'),
      markup`${problem}<form method="post" action="/console/clients">${c.csrfField}
<fieldset><legend>${t('console:clients.form.kind')}</legend>${kinds}</fieldset>
<label for="client_name">${t('console:clients.form.name')}</label><input type="text" id="client_name" name="client_name" value="${v('client_name')}">
<label for="client_id">${t('console:clients.form.clientId')}</label><input type="text" id="client_id" name="client_id" value="${v('client_id')}">
<label for="redirect_uris">${t('console:clients.form.redirectUris')}</label><textarea id="redirect_uris" name="redirect_uris">${v('redirect_uris')}</textarea>
<label for="post_logout_redirect_uris">${t('console:clients.form.postLogoutRedirectUris')}</label><textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris">${v('post_logout_redirect_uris')}</textarea>
<label for="scope">${t('console:clients.form.scope')}</label><input type="text" id="scope" name="scope" value="${v('scope')}">
<fieldset><legend>${t('console:clients.form.keys')}</legend>
<label for="jwks">${t('console:clients.form.jwks')}</label><textarea id="jwks" name="jwks">${v('jwks')}</textarea>
<label for="jwks_uri">${t('console:clients.form.jwksUri')}</label><input type="url" id="jwks_uri" name="jwks_uri" value="${v('jwks_uri')}"></fieldset>
<fieldset><legend>${t('console:clients.form.options')}</legend>${toggles}</fieldset>
<fieldset><legend>${t('console:clients.form.roles')}</legend>${await roleBoxes(c, roles)}</fieldset>
<button type="submit">${t('console:clients.form.create')}</button></form>`,
      { section: 'clients', status },
    );
  }

  router.get('/console/clients/new', (ctx) => newClientForm(ctx, {}, []));

  router.post('/console/clients', form, async function createClient(ctx) {
    const c = consoleOf(ctx);
    const values = formOf(ctx);
    const roles = formValues(ctx, 'roles');
    const kind = values['kind'] ?? '';
    const jwks = values['jwks']?.trim();
    let keys: unknown = jwks;
    try {
      keys = jwks ? JSON.parse(jwks) : undefined;
    } catch {
      // Sent as the text it is: the admin API names the field it cannot read.
    }
    const redirectUris = lines(values['redirect_uris']);
    const postLogout = lines(values['post_logout_redirect_uris']);
    const body = {
      ...(isKind(kind) ? KINDS[kind] : {}),
      ...(values['client_id'] ? { client_id: values['client_id'].trim() } : {}),
      ...(values['client_name'] ? { client_name: values['client_name'].trim() } : {}),
      ...(redirectUris.length ? { redirect_uris: redirectUris } : {}),
      ...(postLogout.length ? { post_logout_redirect_uris: postLogout } : {}),
      ...(values['scope']?.trim() ? { scope: values['scope'].trim() } : {}),
      ...(keys !== undefined ? { jwks: keys } : {}),
      ...(values['jwks_uri']?.trim() ? { jwks_uri: values['jwks_uri'].trim() } : {}),
      ...(roles.length ? { roles } : {}),
      ...Object.fromEntries(
        TOGGLES.filter(([name]) => values[name]).map(([, key, on]) => [key, on]),
      ),
    };
    const answer = await c.api.send<ClientView & { client_secret?: string }>(
      'POST',
      '/admin/clients',
      body,
    );
    if (!answer.ok) return newClientForm(ctx, values, roles, apiError(answer), answer.status);
    const { t } = c;
    const id = answer.body.client_id;
    c.render(
      t('console:clients.result.title'),
      markup`<p><code>${id}</code> ${text(answer.body['client_name'])}</p>
${secretOnce(c, answer.body.client_secret)}
<p><a href="/console/clients/${encodeURIComponent(id)}">${t('console:clients.result.open')}</a></p>`,
      { section: 'clients', status: 201 },
    );
  });

  /** A client's page: its registration, the change form, rotation and deletion. */
  async function clientPage(ctx: Context, problem: SafeHtml | '' = '', status = 200) {
    const c = consoleOf(ctx);
    const { t } = c;
    const id = ctx.params['id']!;
    const answer = await c.api.get<ClientView>(`/admin/clients/${seg(id)}`);
    if (!answer.ok) {
      const message =
        answer.status === 404
          ? markup`<p class="error">${t('console:clients.detail.notFound')}</p>`
          : apiError(answer);
      return c.render(t('console:nav.clients'), message, {
        section: 'clients',
        status: answer.status === 404 ? 404 : 502,
      });
    }
    const client = answer.body;
    const path = `/console/clients/${encodeURIComponent(id)}`;
    const values = problem ? formOf(ctx) : {};
    const field = (name: string, current: unknown) =>
      problem ? values[name] : Array.isArray(current) ? current.join('\n') : text(current);
    const service = kindOf(client) === 'service';
    const currentRoles = problem
      ? formValues(ctx, 'roles')
      : Array.isArray(client['roles'])
        ? (client['roles'] as string[])
        : [];
    const metadata = joinHtml(
      Object.entries(client).map(
        ([k, value]) => markup`<tr><th>${k}</th><td>${shown(value)}</td></tr>`,
      ),
      '\n',
    );
    c.render(
      markup`${text(client['client_name'] ?? id)}`,
      markup`${c.notice()}<p><code>${id}</code> · ${t(`console:clients.kinds.${kindOf(client)}`)} · ${auditLink(c, id)}</p>
<h2>${t('console:clients.detail.edit')}</h2>${problem}
<form method="post" action="${path}">${c.csrfField}
<label for="client_name">${t('console:clients.form.name')}</label><input type="text" id="client_name" name="client_name" value="${field('client_name', client['client_name'])}">
<label for="redirect_uris">${t('console:clients.form.redirectUris')}</label><textarea id="redirect_uris" name="redirect_uris">${field('redirect_uris', client['redirect_uris'] ?? [])}</textarea>
<label for="scope">${t('console:clients.form.scope')}</label><input type="text" id="scope" name="scope" value="${field('scope', client['scope'])}">
${service ? markup`<fieldset><legend>${t('console:clients.form.roles')}</legend><input type="hidden" name="roles_shown" value="1">${await roleBoxes(c, currentRoles)}</fieldset>` : ''}
<button type="submit">${t('console:clients.detail.save')}</button></form>
${
  hasSecret(client)
    ? markup`<h2>${t('console:clients.detail.secret')}</h2><p>${t('console:clients.detail.rotateExplain')}</p>
<form method="post" action="${path}/secret">${c.csrfField}<button type="submit" class="danger">${t('console:clients.detail.rotate')}</button></form>`
    : ''
}
<h2>${t('console:clients.detail.delete')}</h2><p>${t('console:clients.detail.deleteExplain')}</p>
<p><a href="${path}/delete">${t('console:clients.detail.delete')}</a></p>
<h2>${t('console:clients.detail.metadata')}</h2><table><tbody>${metadata}</tbody></table>`,
      { section: 'clients', status },
    );
  }

  router.get('/console/clients/:id', (ctx) => clientPage(ctx));

  router.post('/console/clients/:id', form, async function changeClient(ctx) {
    const c = consoleOf(ctx);
    const id = ctx.params['id']!;
    const values = formOf(ctx);
    const name = values['client_name']?.trim();
    const answer = await c.api.send('PATCH', `/admin/clients/${seg(id)}`, {
      // The admin API keeps a name it is not sent; an empty one is no name it accepts.
      ...(name ? { client_name: name } : {}),
      redirect_uris: lines(values['redirect_uris']),
      scope: values['scope']?.trim() ?? '',
      ...(values['roles_shown'] ? { roles: formValues(ctx, 'roles') } : {}),
    });
    if (!answer.ok) return clientPage(ctx, apiError(answer), answer.status);
    c.redirect(`/console/clients/${encodeURIComponent(id)}`, 'clientSaved');
  });

  router.post('/console/clients/:id/secret', form, async function rotateSecret(ctx) {
    const c = consoleOf(ctx);
    if (!c.requireFresh()) return;
    const id = ctx.params['id']!;
    const path = `/console/clients/${encodeURIComponent(id)}`;
    const answer = await c.api.send<ClientView & { client_secret?: string }>(
      'POST',
      `/admin/clients/${seg(id)}/secret`,
    );
    if (!answer.ok) return refused(c, 'clients', answer, path);
    const { t } = c;
    c.render(
      t('console:clients.rotated.title'),
      markup`<p><code>${id}</code></p>${secretOnce(c, answer.body.client_secret)}
<p><a href="${path}">${t('console:clients.result.open')}</a></p>`,
      { section: 'clients' },
    );
  });

  router.get('/console/clients/:id/delete', async function confirmDelete(ctx) {
    const c = consoleOf(ctx);
    const { t } = c;
    const id = ctx.params['id']!;
    const path = `/console/clients/${encodeURIComponent(id)}`;
    c.render(
      t('console:clients.confirmDelete.title', { id }),
      markup`<p>${t('console:clients.detail.deleteExplain')}</p>
<form method="post" action="${path}/delete">${c.csrfField}<button type="submit" class="danger">${t('console:clients.confirmDelete.confirm')}</button></form>
<p><a href="${path}">${t('console:clients.confirmDelete.cancel')}</a></p>`,
      { section: 'clients' },
    );
  });

  router.post('/console/clients/:id/delete', form, async function deleteClient(ctx) {
    const c = consoleOf(ctx);
    if (!c.requireFresh()) return;
    const id = ctx.params['id']!;
    const answer = await c.api.send('DELETE', `/admin/clients/${seg(id)}`);
    if (!answer.ok)
      return refused(c, 'clients', answer, `/console/clients/${encodeURIComponent(id)}`);
    c.redirect('/console/clients', 'clientDeleted');
  });
}
