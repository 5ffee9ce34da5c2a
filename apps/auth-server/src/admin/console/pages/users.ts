import type { Context } from 'koa';
import { joinHtml, markup, type SafeHtml } from '../../../identity/ui/html.js';
import { seg } from '../admin-api.js';
import {
  apiError,
  consoleOf,
  formOf,
  formValues,
  type ConsolePages,
  type ConsoleRequest,
} from '../kit.js';
import { timeHtml, timeText } from './format.js';
import { listPage, refused, roleBoxes, searchTerm } from './parts.js';

/** A user as the admin API shows one (admin/routes.ts userView). */
interface UserView {
  id: string;
  email: string;
  name: string | null;
  roles: string[];
  disabledAt: string | null;
  emailVerifiedAt: string | null;
  createdAt: string;
}

interface UserPage {
  items: UserView[];
  nextCursor: string | null;
}

interface Sessions {
  items: {
    id: string;
    signed_in_at: string;
    expires_at: string;
    amr: string[];
    clients: string[];
  }[];
  grants: {
    id: string;
    client_id: string;
    scopes: string[];
    created_at: string;
    expires_at: string;
  }[];
}

interface Factors {
  items: {
    kind: string;
    id: string;
    name: string | null;
    created_at: string;
    last_used_at: string | null;
  }[];
  recovery_codes_remaining: number;
}

const userPath = (id: string) => `/console/users/${encodeURIComponent(id)}`;

const list = (values: readonly string[]) => joinHtml(values, ', ');

/** A button alone in its form (POST to `action`), `danger` for what cannot be undone. */
const button = (c: ConsoleRequest, action: string, label: SafeHtml, danger = false) =>
  markup`<form method="post" action="${action}">${c.csrfField}<button type="submit"${danger ? markup` class="danger"` : ''}>${label}</button></form>`;

/** /console/users (docs/console.md "Users"): search, create, and each user's account. */
export function userPages({ router, form }: ConsolePages): void {
  router.get('/console/users', async function showUsers(ctx) {
    const c = consoleOf(ctx);
    const { t } = c;
    const q = searchTerm(ctx);
    const after = typeof ctx.query['after'] === 'string' ? ctx.query['after'] : undefined;
    const answer = await c.api.get<UserPage>('/admin/users', { q, after, limit: '50' });
    if (!answer.ok) {
      return c.render(t('console:nav.users'), apiError(answer), { section: 'users', status: 502 });
    }
    const next = answer.body.nextCursor
      ? markup`<p><a href="/console/users?${new URLSearchParams({ ...(q ? { q } : {}), after: answer.body.nextCursor }).toString()}">${t('console:users.next')}</a></p>`
      : '';
    listPage(c, 'users', {
      q,
      columns: ['email', 'name', 'roles', 'status', 'created'].map((column) =>
        t(`console:users.${column}`),
      ),
      rows: answer.body.items.map(
        (u) => markup`<tr><td><a href="${userPath(u.id)}">${u.email}</a></td><td>${u.name}</td>
<td>${list(u.roles)}</td><td>${u.disabledAt ? t('console:users.disabled', { at: timeText(u.disabledAt) }) : t('console:users.active')}</td><td>${timeHtml(u.createdAt)}</td></tr>`,
      ),
      after: next,
    });
  });

  /** The create form; a refused attempt's values (never its password) and `problem` above it. */
  async function newUserForm(
    ctx: Context,
    values: Record<string, string>,
    roles: string[],
    problem: SafeHtml | '' = '',
    status = 200,
  ) {
    const c = consoleOf(ctx);
    const { t } = c;
    c.render(
      t('console:users.form.title'),
      markup`${problem}<form method="post" action="/console/users">${c.csrfField}
<label for="email">${t('console:users.form.email')}</label><input type="email" id="email" name="email" required value="${values['email']}">
<label for="name">${t('console:users.form.name')}</label><input type="text" id="name" name="name" value="${values['name']}">
<label for="password">${t('console:users.form.password')}</label><input type="password" id="password" name="password" autocomplete="new-password" required>
<fieldset><legend>${t('console:users.form.roles')}</legend>${await roleBoxes(c, roles)}</fieldset>
<button type="submit">${t('console:users.form.create')}</button></form>`,
      { section: 'users', status },
    );
  }

  router.get('/console/users/new', (ctx) => newUserForm(ctx, {}, []));

  router.post('/console/users', form, async function createUser(ctx) {
    const c = consoleOf(ctx);
    const values = formOf(ctx);
    const roles = formValues(ctx, 'roles');
    const name = values['name']?.trim();
    const answer = await c.api.send<UserView>('POST', '/admin/users', {
      email: values['email']?.trim() ?? '',
      password: values['password'] ?? '',
      roles,
      ...(name ? { name } : {}),
    });
    if (!answer.ok) return newUserForm(ctx, values, roles, apiError(answer), answer.status);
    c.redirect(userPath(answer.body.id), 'userCreated');
  });

  /** A user's page: details, roles, the account's switches, factors, sessions and apps. */
  async function userPage(ctx: Context, problem: SafeHtml | '' = '', status = 200) {
    const c = consoleOf(ctx);
    const { t } = c;
    const answer = await c.api.get<UserView>(`/admin/users/${seg(ctx.params['id']!)}`);
    if (!answer.ok) {
      const message =
        answer.status === 404
          ? markup`<p class="error">${t('console:users.detail.notFound')}</p>`
          : apiError(answer);
      return c.render(t('console:nav.users'), message, {
        section: 'users',
        status: answer.status === 404 ? 404 : 502,
      });
    }
    const user = answer.body;
    const path = userPath(user.id);
    const id = seg(user.id);
    const [factors, sessions] = await Promise.all([
      c.api.get<Factors>(`/admin/users/${id}/factors`),
      c.api.get<Sessions>(`/admin/users/${id}/sessions`),
    ]);
    const roles = problem ? formValues(ctx, 'roles') : user.roles;
    const factorList = factors.ok
      ? markup`${
          factors.body.items.length === 0
            ? markup`<p class="muted">${t('console:users.detail.noFactors')}</p>`
            : markup`<ul>${factors.body.items.map((f) => markup`<li>${f.kind}${f.name ? ` (${f.name})` : ''} · ${timeHtml(f.created_at)}</li>`)}</ul>`
        }<p class="muted">${t('console:users.detail.recoveryCodes', { left: factors.body.recovery_codes_remaining })}</p>
${button(c, `${path}/factors/reset`, t('console:users.detail.resetFactors'), true)}<p class="muted">${t('console:users.detail.resetFactorsExplain')}</p>`
      : apiError(factors);
    const sessionList = sessions.ok
      ? markup`${
          sessions.body.items.length === 0
            ? markup`<p class="muted">${t('console:users.detail.noSessions')}</p>`
            : markup`<table><thead><tr><th>${t('console:users.detail.signedIn')}</th><th>${t('console:users.detail.expires')}</th><th>${t('console:users.detail.methods')}</th><th>${t('console:users.detail.clients')}</th><th></th></tr></thead><tbody>
${joinHtml(
  sessions.body.items.map(
    (s) =>
      markup`<tr><td>${timeHtml(s.signed_in_at)}</td><td>${timeHtml(s.expires_at)}</td><td>${list(s.amr)}</td><td>${list(s.clients)}</td><td>${button(c, `${path}/sessions/${encodeURIComponent(s.id)}/end`, t('console:users.detail.end'), true)}</td></tr>`,
  ),
  '\n',
)}</tbody></table>`
        }${button(c, `${path}/sessions/end`, t('console:users.detail.endAll'), true)}
<h2>${t('console:users.detail.grants')}</h2>${
          sessions.body.grants.length === 0
            ? markup`<p class="muted">${t('console:users.detail.noGrants')}</p>`
            : markup`<table><thead><tr><th>${t('console:users.detail.client')}</th><th>${t('console:users.detail.scopes')}</th><th>${t('console:users.created')}</th><th>${t('console:users.detail.expires')}</th><th></th></tr></thead><tbody>
${joinHtml(
  sessions.body.grants.map(
    (g) =>
      markup`<tr><td><a href="/console/clients/${encodeURIComponent(g.client_id)}"><code>${g.client_id}</code></a></td><td>${list(g.scopes)}</td><td>${timeHtml(g.created_at)}</td><td>${timeHtml(g.expires_at)}</td><td>${button(c, `${path}/grants/${encodeURIComponent(g.id)}/revoke`, t('console:users.detail.revoke'), true)}</td></tr>`,
  ),
  '\n',
)}</tbody></table>`
        }`
      : apiError(sessions);
    c.render(
      markup`${user.email}`,
      markup`${c.notice()}<table><tbody>
<tr><th>${t('console:users.detail.id')}</th><td><code>${user.id}</code></td></tr>
<tr><th>${t('console:users.name')}</th><td>${user.name}</td></tr>
<tr><th>${t('console:users.status')}</th><td>${user.disabledAt ? markup`<strong class="error">${t('console:users.disabled', { at: timeText(user.disabledAt) })}</strong>` : t('console:users.active')}</td></tr>
<tr><th>${t('console:users.detail.verified')}</th><td>${user.emailVerifiedAt ? timeHtml(user.emailVerifiedAt) : t('console:users.detail.notVerified')}</td></tr>
<tr><th>${t('console:users.created')}</th><td>${timeHtml(user.createdAt)}</td></tr>
</tbody></table>
<p><a href="/console/audit?subject=${encodeURIComponent(user.id)}">${t('console:users.audit')}</a></p>
<h2>${t('console:users.roles')}</h2>${problem}
<form method="post" action="${path}/roles">${c.csrfField}<fieldset><legend>${t('console:users.roles')}</legend>${await roleBoxes(c, roles)}</fieldset>
<button type="submit">${t('console:users.detail.saveRoles')}</button></form>
<h2>${t('console:users.detail.account')}</h2>
${
  user.disabledAt
    ? button(c, `${path}/enable`, t('console:users.detail.enable'))
    : markup`${button(c, `${path}/disable`, t('console:users.detail.disable'), true)}<p class="muted">${t('console:users.detail.disableExplain')}</p>`
}
${button(c, `${path}/password-reset`, t('console:users.detail.passwordReset'), true)}<p class="muted">${t('console:users.detail.passwordResetExplain')}</p>
<h2>${t('console:users.detail.factors')}</h2>${factorList}
<h2>${t('console:users.detail.sessions')}</h2>${sessionList}`,
      { section: 'users', status },
    );
  }

  router.get('/console/users/:id', (ctx) => userPage(ctx));

  router.post('/console/users/:id/roles', form, async function changeRoles(ctx) {
    const c = consoleOf(ctx);
    const id = ctx.params['id']!;
    const answer = await c.api.send('PATCH', `/admin/users/${seg(id)}`, {
      roles: formValues(ctx, 'roles'),
    });
    if (!answer.ok) return userPage(ctx, apiError(answer), answer.status);
    c.redirect(userPath(id), 'userRolesSaved');
  });

  /**
   * An action on the user: `fresh` ones need a recent sign-in; `done` names the notice, or
   * picks it from the admin API's answer.
   */
  function action(
    path: string,
    method: 'POST' | 'DELETE',
    api: (params: Record<string, string>) => string,
    done: string | ((body: Record<string, unknown>) => string),
    fresh = true,
  ) {
    router.post(path, form, async function userAction(ctx) {
      const c = consoleOf(ctx);
      if (fresh && !c.requireFresh()) return;
      const id = ctx.params['id']!;
      const answer = await c.api.send(method, api(ctx.params as Record<string, string>));
      if (!answer.ok) return refused(c, 'users', answer, userPath(id));
      c.redirect(userPath(id), typeof done === 'string' ? done : done(answer.body ?? {}));
    });
  }
  const user = (p: Record<string, string>) => `/admin/users/${seg(p['id']!)}`;
  action('/console/users/:id/disable', 'POST', (p) => `${user(p)}/disable`, 'userDisabled');
  action('/console/users/:id/enable', 'POST', (p) => `${user(p)}/enable`, 'userEnabled', false);
  action(
    '/console/users/:id/password-reset',
    'POST',
    (p) => `${user(p)}/password-reset`,
    (body) =>
      body['reset_link_mailed'] === false ? 'userPasswordResetNotMailed' : 'userPasswordReset',
  );
  action(
    '/console/users/:id/factors/reset',
    'DELETE',
    (p) => `${user(p)}/factors`,
    'userFactorsReset',
  );
  action(
    '/console/users/:id/sessions/end',
    'DELETE',
    (p) => `${user(p)}/sessions`,
    'userSessionsEnded',
  );
  action(
    '/console/users/:id/sessions/:session/end',
    'DELETE',
    (p) => `${user(p)}/sessions/${seg(p['session']!)}`,
    'userSessionEnded',
  );
  action(
    '/console/users/:id/grants/:grant/revoke',
    'DELETE',
    (p) => `${user(p)}/grants/${seg(p['grant']!)}`,
    'userGrantRevoked',
  );
}
