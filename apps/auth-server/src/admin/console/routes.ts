import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { ACR, acrSatisfies } from '@portcullis/claims';
import { decodeJwt } from 'jose';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { markup, translated, type SafeHtml } from '../../identity/ui/html.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import type { UiFactory } from '../../identity/ui/index.js';
import { callDependency, ConsoleSessionRefused, createAdminApi, seg } from './admin-api.js';
import { CONSOLE_CALLBACK, CONSOLE_CLIENT_ID, CONSOLE_PATH } from './client.js';
import {
  checkConsoleCsrf,
  consoleCsrf,
  createConsoleRequest,
  formOf,
  returnPath,
  type ConsolePages,
} from './kit.js';
import { consoleLayout } from './layout.js';
import { auditPages } from './pages/audit.js';
import { clientPages } from './pages/clients.js';
import { keyPages } from './pages/keys.js';
import { resourcePages } from './pages/resources.js';
import { rolePages } from './pages/roles.js';
import { statusPages, type StatusSources } from './pages/status.js';
import { userPages } from './pages/users.js';
import { createConsoleCookies, randomToken, type ConsoleSession } from './session.js';

export interface ConsoleDeps {
  issuer: () => string;
  /** This server's own token endpoint, reached directly (loopback), not through the edge. */
  tokenEndpoint: () => string;
  /** Its revocation endpoint (RFC 7009), the same way. */
  revocationEndpoint: () => string;
  /** Ends this browser's session at the authorization server (its sign-in, factor included). */
  endBrowserSession: (ctx: Context) => Promise<void>;
  /** The admin API's base URL (ADMIN_HOST:ADMIN_PORT). */
  adminUrl: () => string;
  keyEncryptionKey: Buffer;
  csrfKey: string;
  ui: UiFactory;
  logger: Logger;
  /** CONSOLE_STEP_UP_SECONDS: how recent a sign-in a destructive action needs. */
  stepUpSeconds: number;
  /** The status page's sources (pages/status.ts). */
  status: StatusSources;
  /** Parses urlencoded forms (form-body.ts). */
  formBody: Middleware;
  now?: () => number;
}

/** The admin console at /console (docs/console.md): a BFF whose tokens never reach the browser. */
export function consoleRoutes(router: Router, deps: ConsoleDeps): void {
  const now = deps.now ?? Date.now;
  const cookies = createConsoleCookies({
    keyEncryptionKey: deps.keyEncryptionKey,
    path: CONSOLE_PATH,
    now,
  });

  /** A page outside a console session (sign-in problems, refusals). */
  function bare(ctx: Context, status: number, title: SafeHtml, body: SafeHtml) {
    const ui = deps.ui.of(ctx);
    htmlHeaders(ctx, [], { ui });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = consoleLayout(ui, { title, body });
  }

  function refuse(ctx: Context, status: number, messageKey: string) {
    const t = translated(deps.ui.of(ctx).t);
    bare(
      ctx,
      status,
      t('console:refused.title'),
      markup`<p class="error" role="alert">${t(messageKey)}</p><p><a href="${CONSOLE_PATH}/sign-in">${t('console:signIn')}</a></p>`,
    );
  }

  router.get(`${CONSOLE_PATH}/sign-in`, function consoleSignIn(ctx) {
    const issuer = deps.issuer();
    const pending = {
      state: randomToken(),
      nonce: randomToken(),
      verifier: randomToken(),
      returnTo: returnPath(ctx.query['return']),
    };
    cookies.setPending(ctx, pending);
    const url = new URL(`${issuer}/authorize`);
    url.search = new URLSearchParams({
      client_id: CONSOLE_CLIENT_ID,
      response_type: 'code',
      redirect_uri: `${issuer}${CONSOLE_CALLBACK}`,
      scope: 'openid',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: createHash('sha256').update(pending.verifier).digest('base64url'),
      code_challenge_method: 'S256',
      acr_values: ACR.mfa,
      // Step-up: the password and the second factor again, now.
      ...(ctx.query['step_up'] ? { prompt: 'login', max_age: '0' } : {}),
    }).toString();
    ctx.redirect(url.href);
  });

  router.get(CONSOLE_CALLBACK, async function consoleCallback(ctx) {
    const pending = cookies.pending(ctx);
    const { code, state, error } = ctx.query;
    if (!pending || typeof state !== 'string' || !checkConsoleCsrf(pending.state, state)) {
      return refuse(ctx, 400, 'console:refused.expired');
    }
    if (typeof error === 'string' || typeof code !== 'string') {
      return refuse(ctx, 403, 'console:refused.notSignedIn');
    }
    const issuer = deps.issuer();
    const exchange = await callDependency<Record<string, unknown>>(
      'token endpoint',
      deps.tokenEndpoint(),
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: `${issuer}${CONSOLE_CALLBACK}`,
          client_id: CONSOLE_CLIENT_ID,
          code_verifier: pending.verifier,
        }),
      },
    );
    const tokens = exchange.body ?? {};
    if (!exchange.ok || typeof tokens['access_token'] !== 'string') {
      deps.logger.warn({ error: tokens['error'] }, 'console code exchange refused');
      return refuse(ctx, 403, 'console:refused.notSignedIn');
    }
    // Straight from our own token endpoint: its claims are checked, its signature need not be.
    const id = decodeJwt(String(tokens['id_token']));
    if (
      id.iss !== issuer ||
      id.aud !== CONSOLE_CLIENT_ID ||
      id['nonce'] !== pending.nonce ||
      !acrSatisfies(id['acr'] as string | undefined, ACR.mfa)
    ) {
      return refuse(ctx, 403, 'console:refused.noSecondFactor');
    }
    const accessToken = tokens['access_token'];
    // The admin API decides who is an administrator; asking it here refuses others at the door.
    const me = await createAdminApi(deps.adminUrl, accessToken)
      .get(`/admin/users/${seg(String(id.sub))}`)
      .catch((error: unknown) => {
        if (error instanceof ConsoleSessionRefused) return undefined;
        throw error;
      });
    if (!me) return refuse(ctx, 403, 'console:refused.notAdmin');
    if (!me.ok) return refuse(ctx, 502, 'console:refused.adminApi');
    const seconds = Math.floor(now() / 1000);
    cookies.setSession(ctx, {
      accessToken,
      sub: String(id.sub),
      email: String(me.body['email'] ?? id.sub),
      authTime: Number(id['auth_time'] ?? seconds),
      exp: seconds + Number(tokens['expires_in'] ?? 60),
      sid: randomToken(),
    });
    ctx.cookies.set('portcullis_console_login', null, { path: CONSOLE_PATH });
    ctx.redirect(pending.returnTo);
  });

  // Everything else under /console needs a session, and every POST its CSRF token.
  const signedIn: Middleware = async function consoleSession(ctx, next) {
    const session: ConsoleSession | undefined = cookies.session(ctx);
    if (!session) {
      if (ctx.method === 'GET') {
        return ctx.redirect(`${CONSOLE_PATH}/sign-in?return=${encodeURIComponent(ctx.url)}`);
      }
      return refuse(ctx, 401, 'console:refused.signedOut');
    }
    const csrf = consoleCsrf(deps.csrfKey, session);
    ctx.state['console'] = createConsoleRequest(
      ctx,
      session,
      createAdminApi(deps.adminUrl, session.accessToken),
      csrf,
      { ui: deps.ui, stepUpSeconds: deps.stepUpSeconds, now },
    );
    try {
      await next();
    } catch (error) {
      if (!(error instanceof ConsoleSessionRefused)) throw error;
      cookies.clear(ctx);
      refuse(
        ctx,
        error.status,
        error.status === 403 ? 'console:refused.notAdmin' : 'console:refused.signedOut',
      );
    }
  };
  const form: Middleware = async function consoleForm(ctx, next) {
    await deps.formBody(ctx, async () => {
      const session = cookies.session(ctx);
      if (!session || !checkConsoleCsrf(consoleCsrf(deps.csrfKey, session), formOf(ctx)['csrf'])) {
        return refuse(ctx, 403, 'console:refused.forged');
      }
      await next();
    });
  };

  // Before the cookies are cleared: a failure here is a 503 page, and the session stays to retry.
  router.post(`${CONSOLE_PATH}/sign-out`, form, async function consoleSignOut(ctx) {
    const session = cookies.session(ctx);
    // A copy of the sealed cookie dies with its token ...
    if (session) {
      await callDependency('revocation endpoint', deps.revocationEndpoint(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: session.accessToken,
          token_type_hint: 'access_token',
          client_id: CONSOLE_CLIENT_ID,
        }),
      });
    }
    // ... and the next sign-in asks for the password and the second factor again.
    await deps.endBrowserSession(ctx);
    cookies.clear(ctx);
    const t = translated(deps.ui.of(ctx).t);
    bare(
      ctx,
      200,
      t('console:signedOut'),
      markup`<p><a href="${CONSOLE_PATH}/sign-in">${t('console:signIn')}</a></p>`,
    );
  });

  router.get(CONSOLE_PATH, signedIn, (ctx) => ctx.redirect(`${CONSOLE_PATH}/status`));
  router.use(`${CONSOLE_PATH}/:section`, signedIn);
  const pages: ConsolePages = { router, form };
  statusPages(pages, deps.status);
  clientPages(pages);
  userPages(pages);
  resourcePages(pages);
  rolePages(pages);
  keyPages(pages);
  auditPages(pages);
}
