import type { Context } from 'koa';
import { joinHtml, markup } from '../../../identity/ui/html.js';
import type { AuditKind } from '../../../data/audit-repo.js';
import { CONSOLE_PATH } from '../client.js';
import { apiError, consoleOf, type ConsolePages } from '../kit.js';
import { timeHtml } from './format.js';

/** GET /admin/audit's items. */
interface AuditEntry {
  id: string;
  at: string;
  kind: string;
  actor?: string | null;
  subject: string | null;
  clientId: string | null;
  grantId: string | null;
  detail: Record<string, unknown>;
}

/** Every kind, for the filter; the check below fails to compile when audit-repo gains one. */
const KINDS = [
  'mfa_enrolled',
  'mfa_removed',
  'mfa_failed',
  'mfa_reset',
  'recovery_codes_generated',
  'recovery_code_used',
  'refresh_token_reuse',
  'code_reuse',
  'grant_revoked',
  'login_failed',
  'login_rate_limited',
  'client_created',
  'client_deleted',
  'client_updated',
  'client_secret_rotated',
  'client_registered',
  'registration_token_issued',
  'user_created',
  'user_roles_changed',
  'user_disabled',
  'user_enabled',
  'password_reset',
  'signing_key_rotated',
  'passkey_added',
  'passkey_removed',
  'passkey_refused',
  'password_changed',
  'email_change_requested',
  'email_change_cancelled',
  'email_changed',
  'account_closed',
  'session_ended',
  'sessions_ended',
  'email_verified',
  'email_verification_sent',
  'token_exchanged',
  'role_created',
  'role_updated',
  'role_deleted',
  'resource_created',
  'resource_updated',
  'resource_deleted',
  'permission_created',
  'permission_updated',
  'permission_deleted',
  'signing_key_retired',
] as const satisfies readonly AuditKind[];
const allKinds: Exclude<AuditKind, (typeof KINDS)[number]> extends never ? true : never = true;
void allKinds;

/** A replayed refresh token or code: someone may hold a stolen one (README "Refresh tokens"). */
const ALARMING = new Set<string>(['refresh_token_reuse', 'code_reuse']);

const AUDIT = `${CONSOLE_PATH}/audit`;
/** The filters the page passes on to the admin API, and keeps when paging. */
const FILTERS = ['kind', 'actor', 'subject', 'client_id', 'since', 'until'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** A `datetime-local` value (no offset) read as UTC → ISO 8601 for the API; anything else as typed. */
export function instantOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(value)
    ? `${value.length === 16 ? `${value}:00` : value}Z`
    : value;
}

const query = (ctx: Context, name: string) => {
  const v = ctx.query[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

function pageUrl(filters: Filters, before?: string): string {
  const params = new URLSearchParams();
  for (const name of FILTERS) if (filters[name]) params.set(name, filters[name]);
  if (before) params.set('before', before);
  return params.size > 0 ? `${AUDIT}?${params}` : AUDIT;
}

/** /console/audit: newest first, filtered, paged by the previous page's last row id. */
export function auditPages({ router }: ConsolePages): void {
  router.get(AUDIT, async function showAudit(ctx) {
    const c = consoleOf(ctx);
    const filters: Filters = {};
    for (const name of FILTERS) {
      const value = query(ctx, name);
      if (value) filters[name] = value;
    }
    const before = query(ctx, 'before');
    const answer = await c.api.get<{ items: AuditEntry[]; nextBefore: string | null }>(
      '/admin/audit',
      {
        ...filters,
        since: instantOf(filters.since),
        until: instantOf(filters.until),
        before,
        limit: '50',
      },
    );
    const t = (key: string, vars: Record<string, unknown> = {}) =>
      c.t(`console:audit.${key}`, vars);
    const person = (id: string | null | undefined, path: 'users' | 'clients') =>
      id
        ? markup`<a href="${CONSOLE_PATH}/${path}/${encodeURIComponent(id)}"><code>${id}</code></a>`
        : '—';
    const actorOf = (actor: string | null | undefined) =>
      actor === 'admin-token'
        ? markup`<code>admin-token</code>`
        : actor
          ? person(actor, 'users')
          : markup`<span class="muted">${t('noActor')}</span>`;
    const rows = answer.ok
      ? answer.body.items.map((e) => {
          const alarm = ALARMING.has(e.kind);
          const kind = alarm
            ? markup`<strong>${e.kind}</strong><br><span class="error">${t('reuse')}</span>`
            : e.kind;
          return markup`<tr${alarm ? markup` class="alert" aria-label="${t('reuseLabel', { kind: e.kind })}"` : ''} data-kind="${e.kind}">
<td>${timeHtml(e.at)}</td><td>${kind}</td><td class="wrap">${actorOf(e.actor)}</td>
<td class="wrap">${person(e.subject, 'users')}</td><td class="wrap">${person(e.clientId, 'clients')}</td>
<td class="wrap"><code>${JSON.stringify({ ...(e.grantId ? { grant: e.grantId } : {}), ...e.detail })}</code></td></tr>`;
        })
      : [];
    const field = (name: 'actor' | 'subject' | 'client_id') =>
      markup`<label>${t(`filter.${name}`)} <input type="text" name="${name}" value="${filters[name] ?? ''}"></label>`;
    const when = (name: 'since' | 'until') =>
      markup`<label>${t(`filter.${name}`)} <input type="datetime-local" step="1" name="${name}" value="${filters[name] ?? ''}"></label>`;
    const kinds = [
      markup`<option value="">${t('filter.anyKind')}</option>`,
      ...KINDS.map((k) => markup`<option${k === filters.kind ? ' selected' : ''}>${k}</option>`),
    ];
    const paging = joinHtml(
      [
        before ? markup`<a href="${pageUrl(filters)}">${t('newest')}</a>` : '',
        answer.ok && answer.body.nextBefore
          ? markup`<a href="${pageUrl(filters, answer.body.nextBefore)}" rel="next">${t('older')}</a>`
          : '',
      ].filter(Boolean),
      ' · ',
    );
    c.render(
      c.t('console:nav.audit'),
      markup`${c.notice()}
<form method="get" action="${AUDIT}" class="inline" role="search">
<label>${t('filter.kind')} <select name="kind">${kinds}</select></label>
${field('actor')}${field('subject')}${field('client_id')}${when('since')}${when('until')}
<button type="submit">${t('filter.apply')}</button> <a href="${AUDIT}">${t('filter.clear')}</a></form>
<p class="muted">${t('utc')}</p>
${answer.ok ? '' : apiError(answer)}
<table><thead><tr><th>${t('column.at')}</th><th>${t('column.kind')}</th><th>${t('column.actor')}</th><th>${t('column.subject')}</th><th>${t('column.client')}</th><th>${t('column.detail')}</th></tr></thead>
<tbody>${rows.length > 0 ? rows : markup`<tr><td colspan="6" class="muted">${t('none')}</td></tr>`}</tbody></table>
<p>${paging}</p>`,
      { status: answer.ok ? 200 : answer.status, section: 'audit' },
    );
  });
}
