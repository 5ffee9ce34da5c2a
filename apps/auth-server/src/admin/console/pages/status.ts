import { RECENT_MINUTES, RECENT_RESPONSES, type ReadinessReport } from '@portcullis/observability';
import type { Registry } from 'prom-client';
import { escapeHtml } from '../../../identity/ui/html.js';
import type { Ui } from '../../../identity/ui/index.js';
import { DependencyUnavailableError } from '../../../kernel/unavailable.js';
import { consoleOf, type ConsolePages } from '../kit.js';
import { durationText, timeHtml } from './format.js';
import type { SigningKey } from './keys.js';

/** Where the status page reads from besides the admin API. */
export interface StatusSources {
  /** This server's readiness: database and, with REDIS_URL, Redis. */
  authReady: () => Promise<ReadinessReport>;
  /** This server's Prometheus registry (requests by status). */
  authMetrics: Registry;
  /** CONSOLE_API_URL: the API's /readyz and /metrics. */
  apiUrl: string;
}

/** Requests answered 5xx, and 429, in the last RECENT_MINUTES. */
export interface Refusals {
  serverErrors: number;
  rateLimited: number;
}

/** The API is a neighbour: a slow one must not hold the page. */
const API_TIMEOUT_MS = 2000;

function addClass(totals: Refusals, kind: string, value: number) {
  if (kind === '5xx') totals.serverErrors += value;
  else if (kind === '429') totals.rateLimited += value;
}

/** This process's counts, from its registry. */
export async function registryRefusals(registry: Registry): Promise<Refusals> {
  const totals = { serverErrors: 0, rateLimited: 0 };
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === RECENT_RESPONSES);
  for (const v of metric?.values ?? []) addClass(totals, String(v.labels['class']), v.value);
  return totals;
}

/** The same counts from another process's Prometheus text exposition. */
export function textRefusals(text: string): Refusals {
  const totals = { serverErrors: 0, rateLimited: 0 };
  const line = new RegExp(`^${RECENT_RESPONSES}\\{class="([^"]*)"\\}\\s+(\\S+)`);
  for (const row of text.split('\n')) {
    const match = line.exec(row);
    const value = Number(match?.[2]);
    if (match && Number.isFinite(value)) addClass(totals, match[1]!, value);
  }
  return totals;
}

/** `{status, database, redis…}` or undefined when the API did not answer. */
async function apiReadiness(apiUrl: string): Promise<Record<string, string> | undefined> {
  try {
    const response = await fetch(`${apiUrl}/readyz`, {
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
    const body = (await response.json()) as unknown;
    return body && typeof body === 'object' ? (body as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}

async function apiRefusals(apiUrl: string): Promise<Refusals | undefined> {
  try {
    const response = await fetch(`${apiUrl}/metrics`, {
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
    return response.ok ? textRefusals(await response.text()) : undefined;
  } catch {
    return undefined;
  }
}

/** One app's readiness as a list: the overall state, then each dependency as it reports it. */
function readinessHtml(ui: Ui, body: Record<string, string> | undefined): string {
  if (!body) {
    return `<p class="error" role="alert" data-state="unreachable">${ui.t('console:status.unreachable')}</p>`;
  }
  const { status = 'unknown', ...deps } = body;
  const ok = status === 'ready';
  const items = Object.entries(deps)
    .map(
      ([name, state]) =>
        `<li data-dependency="${escapeHtml(name)}">${escapeHtml(name)}: <span class="${state === 'ok' ? '' : 'error'}">${escapeHtml(state)}</span></li>`,
    )
    .join('');
  return `<p data-state="${escapeHtml(status)}"${ok ? '' : ' class="error" role="alert"'}>${ui.t('console:status.state')}: <strong>${escapeHtml(status)}</strong></p><ul>${items}</ul>`;
}

/** GET /console/status (docs/console.md "Status"). */
export function statusPages({ router }: ConsolePages, sources: StatusSources): void {
  router.get('/console/status', async function showStatus(ctx) {
    const c = consoleOf(ctx);
    const t = (key: string, vars: Record<string, unknown> = {}) =>
      c.ui.t(`console:status.${key}`, vars);
    const [auth, api, keys, authCounts, apiCounts] = await Promise.all([
      sources.authReady(),
      apiReadiness(sources.apiUrl),
      // The page to look at when something is down: a silent admin API is one line of it.
      c.api.get<{ items: SigningKey[] }>('/admin/signing-keys').catch((error: unknown) => {
        if (error instanceof DependencyUnavailableError) return undefined;
        throw error;
      }),
      registryRefusals(sources.authMetrics),
      apiRefusals(sources.apiUrl),
    ]);
    const now = Date.now();
    const keyRows = keys?.ok
      ? keys.body.items
          .filter((k) => k.status === 'active' || k.status === 'next')
          .map(
            (
              k,
            ) => `<tr data-status="${k.status}"><td>${c.ui.t(`console:keys.state.${k.status}`)}</td>
<td><code>${escapeHtml(k.kid)}</code></td><td>${escapeHtml(k.alg)}</td>
<td>${k.status === 'active' ? t('keyAge', { age: durationText(c.ui, now - Date.parse(k.created_at)) }) : c.ui.t('console:keys.signsIn', { time: durationText(c.ui, Date.parse(k.activates_at) - now) })}</td>
<td>${timeHtml(k.activates_at)}</td></tr>`,
          )
          .join('')
      : '';
    const noNext = keys?.ok && !keys.body.items.some((k) => k.status === 'next');
    const counts = (name: 'auth' | 'api', value: Refusals | undefined) =>
      `<tr data-app="${name}"><td>${t(`${name}Name`)}</td>${
        value
          ? `<td>${value.serverErrors}</td><td>${value.rateLimited}</td>`
          : `<td colspan="2" class="muted">${t('unreachable')}</td>`
      }</tr>`;
    c.render(
      c.ui.t('console:nav.status'),
      `${c.notice()}
<section aria-labelledby="status-auth"><h2 id="status-auth">${t('authName')}</h2>${readinessHtml(c.ui, auth.body)}</section>
<section aria-labelledby="status-api"><h2 id="status-api">${t('apiName')}</h2>
<p class="muted"><code>${escapeHtml(sources.apiUrl)}</code></p>${readinessHtml(c.ui, api)}</section>
<section aria-labelledby="status-keys"><h2 id="status-keys">${t('keys')}</h2>
${keys?.ok ? `<table><thead><tr><th>${c.ui.t('console:keys.column.status')}</th><th>${c.ui.t('console:keys.column.kid')}</th><th>${c.ui.t('console:keys.column.alg')}</th><th>${c.ui.t('console:keys.column.age')}</th><th>${c.ui.t('console:keys.column.activates')}</th></tr></thead><tbody>${keyRows}</tbody></table>${noNext ? `<p class="muted">${t('noNext')}</p>` : ''}` : `<p class="error">${t('keysUnavailable')}</p>`}</section>
<section aria-labelledby="status-requests"><h2 id="status-requests">${t('requests')}</h2>
<p class="muted">${t('recent', { minutes: RECENT_MINUTES })}</p>
<table><thead><tr><th></th><th>${t('serverErrors')}</th><th>${t('rateLimited')}</th></tr></thead>
<tbody>${counts('auth', authCounts)}${counts('api', apiCounts)}</tbody></table></section>`,
      { section: 'status' },
    );
  });
}
