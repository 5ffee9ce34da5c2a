import { createHmac } from 'node:crypto';
import type Router from '@koa/router';
import { constantTimeEqual } from '@portcullis/observability';
import type { Context, Middleware } from 'koa';
import { markup, translated, type SafeHtml, type TranslateHtml } from '../../identity/ui/html.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import type { Ui, UiFactory } from '../../identity/ui/index.js';
import type { AdminAnswer, AdminApi, AdminErrorBody } from './admin-api.js';
import { CONSOLE_PATH } from './client.js';
import { consoleLayout, type Section } from './layout.js';
import type { ConsoleSession } from './session.js';

/** What a console page handler has: the administrator, their admin API, the page helpers. */
export interface ConsoleRequest {
  session: ConsoleSession;
  api: AdminApi;
  ui: Ui;
  /** `ui.t` whose results are markup (translations are HTML-safe). */
  t: TranslateHtml;
  /** The forms' CSRF token, bound to this console session. */
  csrf: string;
  /** `<input type=hidden name=csrf>` for every form, and the page it is on (`back`: where step-up returns). */
  csrfField: SafeHtml;
  /** Sends a console page. */
  render(title: SafeHtml, body: SafeHtml, options?: { status?: number; section?: Section }): void;
  /**
   * Destructive actions need a recent sign-in (CONSOLE_STEP_UP_SECONDS): true when it is,
   * otherwise the step-up page is sent and the handler must stop.
   */
  requireFresh(): boolean;
  /** 303 to a console path, with a notice (a `console:done.*` key) shown there once. */
  redirect(path: string, done?: string): void;
  /** The `console:done.*` notice of this page (set by redirect), as HTML. */
  notice(): SafeHtml | '';
}

/** What page modules are mounted with (pages/*.ts). */
export interface ConsolePages {
  router: Router;
  /** Parses the urlencoded form and checks its CSRF token: every POST route uses it first. */
  form: Middleware;
}

export const consoleOf = (ctx: Context): ConsoleRequest => ctx.state['console'] as ConsoleRequest;

export function consoleCsrf(csrfKey: string, session: Pick<ConsoleSession, 'sid'>): string {
  return createHmac('sha256', csrfKey).update(`console:${session.sid}`).digest('base64url');
}

export const checkConsoleCsrf = (expected: string, presented: unknown) =>
  constantTimeEqual(expected, presented);

/** The form's fields as strings (a repeated field: its last value); absent → ''. */
export function formOf(ctx: Context): Record<string, string> {
  const body = (ctx.request.body ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    const last = Array.isArray(v) ? v[v.length - 1] : v;
    out[k] = typeof last === 'string' ? last : '';
  }
  return out;
}

/** Every value of a repeated form field (checkboxes). */
export function formValues(ctx: Context, name: string): string[] {
  const v = ((ctx.request.body ?? {}) as Record<string, unknown>)[name];
  const values = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return values.filter((x): x is string => typeof x === 'string' && x !== '');
}

/** An admin API refusal as a message for the page: its description and each field's problems. */
export function apiError(answer: AdminAnswer<unknown>): SafeHtml {
  const body = (answer.body ?? {}) as AdminErrorBody;
  const fields = Object.entries(body.fields ?? {}).map(
    ([field, problems]) => markup`<li><code>${field}</code>: ${problems.join('; ')}</li>`,
  );
  return markup`<div class="error" role="alert"><p>${body.message ?? body.error ?? `HTTP ${answer.status}`}</p>${fields.length > 0 ? markup`<ul>${fields}</ul>` : ''}</div>`;
}

export interface KitOptions {
  ui: UiFactory;
  stepUpSeconds: number;
  now: () => number;
}

/** The notices a redirect may name: only catalogue keys reach the page. */
const DONE = /^[a-zA-Z]+$/;

export function createConsoleRequest(
  ctx: Context,
  session: ConsoleSession,
  api: AdminApi,
  csrf: string,
  options: KitOptions,
): ConsoleRequest {
  const ui = options.ui.of(ctx);
  const t = translated(ui.t);
  return {
    session,
    api,
    ui,
    t,
    csrf,
    csrfField: markup`<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="back" value="${returnPath(ctx.url)}">`,
    render(title, body, { status = 200, section } = {}) {
      htmlHeaders(ctx, [], { ui });
      ctx.status = status;
      ctx.type = 'html';
      ctx.body = consoleLayout(ui, {
        title,
        body,
        ...(section ? { section } : {}),
        email: session.email,
        csrf,
      });
    },
    requireFresh() {
      const age = Math.floor(options.now() / 1000) - session.authTime;
      if (age <= options.stepUpSeconds) return true;
      // The page whose form asked (no Referer is sent: Referrer-Policy no-referrer).
      const returnTo = returnPath(formOf(ctx)['back']);
      this.render(
        t('console:stepUp.title'),
        markup`<p>${t('console:stepUp.explain', { minutes: Math.ceil(options.stepUpSeconds / 60) })}</p>
<p><a href="${CONSOLE_PATH}/sign-in?step_up=1&amp;return=${encodeURIComponent(returnTo)}">${t('console:stepUp.again')}</a></p>`,
        { status: 401 },
      );
      return false;
    },
    redirect(path, done) {
      ctx.status = 303;
      ctx.redirect(done ? `${path}${path.includes('?') ? '&' : '?'}done=${done}` : path);
    },
    notice() {
      const done = ctx.query['done'];
      if (typeof done !== 'string' || !DONE.test(done)) return '';
      const key = `console:done.${done}`;
      return ui.t(key) === key ? '' : markup`<p class="notice" role="status">${t(key)}</p>`;
    },
  };
}

/** A path (and query) inside the console to come back to; anything else → the console's start. */
export function returnPath(path: unknown): string {
  if (typeof path !== 'string' || path.length > 2000) return CONSOLE_PATH;
  const base = 'http://console.invalid';
  const url = URL.parse(path, base);
  // Same origin only: `//evil.example` or `https://…` would resolve elsewhere.
  if (!url || url.origin !== base || !/^\/console(\/|$)/.test(url.pathname)) return CONSOLE_PATH;
  return `${url.pathname}${url.search}`;
}
