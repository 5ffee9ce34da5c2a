import { RECENT_MINUTES, RECENT_RESPONSES, type ReadinessReport } from '@portcullis/observability';
import type { Registry } from 'prom-client';
import { markup, translated, type SafeHtml } from '../../../identity/ui/html.js';
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
function readinessHtml(ui: Ui, body: Record<string, string> | undefined): SafeHtml {
  const t = translated(ui.t);
  if (!body) {
    return markup`<p class="error" role="alert" data-state="unreachable">${t('console:status.unreachable')}</p>`;
  }
  const { status = 'unknown', ...deps } = body;
  const ok = status === 'ready';
  const items = Object.entries(deps).map(
    ([name, state]) =>
      markup`<li data-dependency="${name}">${name}: <span class="${state === 'ok' ? '' : 'error'}">${state}</span></li>`,
  );
  return markup`<p data-state="${status}"${ok ? '' : markup` class="error" role="alert"`}>${t('console:status.state')}: <strong>${status}</strong></p><ul>${items}</ul>`;
}

/** GET /console/status (docs/console.md "Status"). */
export function statusPages({ router }: ConsolePages, sources: StatusSources): void {
  router.get('/console/status', async function showStatus(ctx) {
    const c = consoleOf(ctx);
    const t = (key: string, vars: Record<string, unknown> = {}) =>
      c.t(`console:status.${key}`, vars);
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
            ) => markup`<tr data-status="${k.status}"><td>${c.t(`console:keys.state.${k.status}`)}</td>
<td><code>${k.kid}</code></td><td>${k.alg}</td>
<td>${k.status === 'active' ? t('keyAge', { age: durationText(c.ui, now - Date.parse(k.created_at)) }) : c.t('console:keys.signsIn', { time: durationText(c.ui, Date.parse(k.activates_at) - now) })}</td>
<td>${timeHtml(k.activates_at)}</td></tr>`,
          )
      : '';
    const noNext = keys?.ok && !keys.body.items.some((k) => k.status === 'next');
    const counts = (name: 'auth' | 'api', value: Refusals | undefined) =>
      markup`<tr data-app="${name}"><td>${t(`${name}Name`)}</td>${
        value
          ? markup`<td>${value.serverErrors}</td><td>${value.rateLimited}</td>`
          : markup`<td colspan="2" class="muted">${t('unreachable')}</td>`
      }</tr>`;
    c.render(
      c.t('console:nav.status'),
      markup`${c.notice()}
<section aria-labelledby="status-auth"><h2 id="status-auth">${t('authName')}</h2>${readinessHtml(c.ui, auth.body)}</section>
<section aria-labelledby="status-api"><h2 id="status-api">${t('apiName')}</h2>
<p class="muted"><code>${sources.apiUrl}</code></p>${readinessHtml(c.ui, api)}</section>
<section aria-labelledby="status-keys"><h2 id="status-keys">${t('keys')}</h2>
${keys?.ok ? markup`<table><thead><tr><th>${c.t('console:keys.column.status')}</th><th>${c.t('console:keys.column.kid')}</th><th>${c.t('console:keys.column.alg')}</th><th>${c.t('console:keys.column.age')}</th><th>${c.t('console:keys.column.activates')}</th></tr></thead><tbody>${keyRows}</tbody></table>${noNext ? markup`<p class="muted">${t('noNext')}</p>` : ''}` : markup`<p class="error">${t('keysUnavailable')}</p>`}</section>
<section aria-labelledby="status-requests"><h2 id="status-requests">${t('requests')}</h2>
<p class="muted">${t('recent', { minutes: RECENT_MINUTES })}</p>
<table><thead><tr><th></th><th>${t('serverErrors')}</th><th>${t('rateLimited')}</th></tr></thead>
<tbody>${counts('auth', authCounts)}${counts('api', apiCounts)}</tbody></table></section>`,
      { section: 'status' },
    );
  });
}
