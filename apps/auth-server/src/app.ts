import Koa from 'koa';
import Router from '@koa/router';
import type { AccountsRepo, SignInLimiter } from '@portcullis/accounts';
import type { DenyList } from '@portcullis/claims';
import type { Db } from '@portcullis/db';
import {
  indexRoutesByFirstSegment,
  logAppErrors,
  readinessEndpoint,
  refuseNul,
  requestLog,
  type AppMetrics,
  type ReadinessReport,
} from '@portcullis/observability';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AuthConfig } from './config.js';
import { AuthServerError } from './errors.js';
import type { AuditRepo } from './data/audit-repo.js';
import { checkCsrf, csrfToken, interactionRoutes } from './interactions/routes.js';
import { messagePage } from './interactions/views.js';
import type { Mfa } from './mfa/index.js';
import type { DeviceGuard } from './provider/device-guard.js';
import { trustProxyAs, type ProviderHost } from './provider/provider-host.js';
import { baseHeaders, htmlHeaders } from './security-headers.js';
import { isUnavailable, RETRY_AFTER_SECONDS, unavailableAs503 } from './unavailable.js';

/** What callers pass to startAuthServer; everything optional has a default from config. */
export interface AuthDeps {
  db: Db;
  logger: Logger;
  /**
   * Defaults to a deny list on the `revocations` table of `db`, started and closed by the
   * server; one passed in must already be started (it is read on token requests).
   */
  denyList?: DenyList;
  /** Defaults to a client for config.redisUrl when set (rate limits shared across instances). */
  redis?: Redis;
  /** Device-flow poll interval in seconds (RFC 8628 §3.2); default 5. */
  deviceIntervalSeconds?: number;
  /** Prints the demo credentials once; default writes to stdout. */
  print?: (text: string) => void;
  /**
   * Shows a secret generated at start (the admin token) once, outside the log stream;
   * default: stderr when it is a terminal, else nowhere (the file under DATA_DIR has it).
   */
  showSecret?: (text: string) => void;
  /** Milliseconds clock for signing-key activation and retirement; default Date.now. */
  now?: () => number;
}

/** The parts the Koa app is wired from (built by server.ts). */
export interface AuthAppParts {
  logger: Logger;
  host: ProviderHost;
  accounts: AccountsRepo;
  audit: AuditRepo;
  deviceGuard: DeviceGuard;
  /** Failed sign-ins per IP and per account (LOGIN_*). */
  signInLimiter: SignInLimiter;
  cookieKeys: string[];
  /** Second factors (README "Multi-factor sign-in"): its routes are mounted here. */
  mfa: Mfa;
  /** This app's Prometheus registry and HTTP middleware (GET /metrics). */
  metrics: AppMetrics;
  /** GET /readyz: database and, with REDIS_URL, Redis. */
  checkReady: () => Promise<ReadinessReport>;
}

/** Interaction pages answer HTML errors; an expired or foreign interaction is a 400, not a 500. */
function interactionErrors(logger: Logger): Koa.Middleware {
  return async function renderInteractionError(ctx, next) {
    try {
      await next();
    } catch (error) {
      const e = error as {
        status?: number;
        statusCode?: number;
        expose?: boolean;
        error_description?: string;
        message?: string;
      };
      const unavailable = isUnavailable(error);
      const status = unavailable ? 503 : (e.statusCode ?? e.status ?? 500);
      if (unavailable) logger.warn({ err: error, path: ctx.path }, 'dependency unavailable');
      else if (status >= 500) logger.error({ err: error, path: ctx.path }, 'interaction failed');
      htmlHeaders(ctx);
      // Fail closed and say so: a 503 with Retry-After, never an unchecked login.
      if (unavailable) ctx.set('Retry-After', RETRY_AFTER_SECONDS);
      ctx.status = unavailable ? 503 : status >= 500 ? 500 : status;
      ctx.type = 'html';
      ctx.body = messagePage(
        'Sign-in problem',
        unavailable
          ? 'Sign-in is temporarily unavailable. Try again in a few seconds.'
          : status >= 500
            ? 'Something went wrong.'
            : error instanceof AuthServerError && error.expose
              ? error.message
              : 'This sign-in request has expired or is not valid here. Start again from the application.',
      );
    }
  };
}

/**
 * A NUL in the path or query, as an OAuth error: PostgreSQL cannot store one, and no
 * parameter has a use for one (README "Bad input"). Bodies are looked at where they are
 * parsed: the interaction forms, and the oidc-provider adapter for what it stores.
 */
const refuseNulAtEdge = refuseNul({
  refuse(ctx) {
    ctx.status = 400;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      error: 'invalid_request',
      error_description: 'the request contains a NUL character',
    };
  },
});

/** Builds the authorization server's Koa app; only server.ts listens. */
export function createAuthApp(config: AuthConfig, parts: AuthAppParts): Koa {
  const app = new Koa();
  // Errors after a response began go to the log, not to Koa's console.error.
  app.on('error', logAppErrors(parts.logger));
  trustProxyAs(app, config.trustProxy);
  // oidc-provider runs on this context, so its signed cookies use these keys.
  app.keys = parts.cookieKeys;
  const router = new Router();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', readinessEndpoint(parts.checkReady));
  // Prometheus scrapes without credentials: keep the port internal or filter at the edge.
  router.get('/metrics', parts.metrics.handler);

  const interactions = new Router({ prefix: '' });
  interactions.use(interactionErrors(parts.logger));
  const csrfKey = parts.cookieKeys[0]!;
  const mfa = parts.mfa.routes(interactions, {
    host: parts.host,
    csrfKey,
    csrfToken: (uid) => csrfToken(csrfKey, uid),
    checkCsrf: (uid, presented) => checkCsrf(csrfKey, uid, presented),
  });
  interactionRoutes(interactions, {
    host: parts.host,
    accounts: parts.accounts,
    audit: parts.audit,
    logger: parts.logger,
    signInLimiter: parts.signInLimiter,
    csrfKey,
    mfa,
  });

  app.use(parts.metrics.middleware);
  app.use(
    requestLog(parts.logger, {
      quietPaths: ['/healthz', '/readyz', '/metrics'],
      logPath: false,
    }),
  );
  app.use(unavailableAs503);
  app.use(baseHeaders);
  app.use(refuseNulAtEdge);
  // Every request, /token and the other oidc-provider routes included, crosses both routers
  // first: each tries only the routes its first path segment can match.
  app.use(indexRoutesByFirstSegment(router).routes());
  app.use(indexRoutesByFirstSegment(interactions).routes());
  app.use(parts.deviceGuard.middleware);
  app.use(parts.host.middleware);
  void config;
  return app;
}
