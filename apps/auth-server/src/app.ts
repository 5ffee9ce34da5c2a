import Koa from 'koa';
import type { Db, SharedDenyList } from '@portcullis/db';
import {
  indexRoutesByFirstSegment,
  logAppErrors,
  refuseNul,
  requestLog,
  routePaths,
} from '@portcullis/observability';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AuthConfig } from './kernel/config.js';
import type { OutboxSettings } from './identity/mail/outbox.js';
import { trustProxyAs } from './oauth/provider-host.js';
import { createAuthRoutes, type AuthAppParts } from './routes.js';
import { providerPaths } from './oauth/provider-routes.js';
import { baseHeaders } from './kernel/security-headers.js';
import { unavailableAs503 } from './kernel/unavailable.js';

/** What callers pass to startAuthServer; everything optional has a default from config. */
export interface AuthDeps {
  db: Db;
  logger: Logger;
  /** Default: a deny list on `revocations`, run by the server; one passed in must be started. */
  denyList?: SharedDenyList;
  /** Defaults to a client for config.redisUrl when set (rate limits shared across instances). */
  redis?: Redis;
  /** Device-flow poll interval in seconds (RFC 8628 §3.2); default 5. */
  deviceIntervalSeconds?: number;
  /** Prints the demo credentials once; default writes to stdout. */
  print?: (text: string) => void;
  /** Shows a secret generated at start (the admin token) once, outside the log stream. */
  showSecret?: (text: string) => void;
  /** Milliseconds clock for signing-key activation and retirement; default Date.now. */
  now?: () => number;
  /** The mail outbox's retry timing (docs/mail.md); tests shorten it. */
  mailOutbox?: OutboxSettings;
}

/** A NUL in the path or query is refused: PostgreSQL cannot store one (README "Bad input"). */
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
export function createAuthApp(
  config: AuthConfig,
  parts: AuthAppParts,
): Koa & { routePaths: string[] } {
  const app = new Koa();
  // Errors after a response began go to the log, not to Koa's console.error.
  app.on('error', logAppErrors(parts.logger));
  trustProxyAs(app, config.trustProxy);
  // oidc-provider runs on this context, so its signed cookies use these keys.
  app.keys = parts.cookieKeys;
  const { operational, pages } = createAuthRoutes(parts);

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
  // Every request crosses both routers first; each tries only routes its first segment matches.
  app.use(indexRoutesByFirstSegment(operational).routes());
  app.use(indexRoutesByFirstSegment(pages).routes());
  app.use(parts.deviceGuard.middleware);
  if (parts.openRegistration) app.use(parts.openRegistration);
  app.use(parts.host.middleware);
  void config;
  return Object.assign(app, {
    routePaths: [...routePaths(operational, pages), ...providerPaths()],
  });
}
