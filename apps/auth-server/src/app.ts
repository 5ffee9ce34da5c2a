import Koa, { type Middleware } from 'koa';
import type { AccountTokens, AccountsRepo, SignInLimiter } from '@portcullis/accounts';
import type { Db, SharedDenyList } from '@portcullis/db';
import {
  indexRoutesByFirstSegment,
  logAppErrors,
  refuseNul,
  requestLog,
  routePaths,
  type AppMetrics,
  type ReadinessReport,
} from '@portcullis/observability';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AuthConfig } from './kernel/config.js';
import type { ConsoleDeps } from './admin/console/routes.js';
import type { AuditRepo } from './data/audit-repo.js';
import type { Mailer } from './identity/mail/mailer.js';
import type { OutboxSettings } from './identity/mail/outbox.js';
import type { MailRequestLimiter } from './identity/mail/request-limits.js';
import type { PersonalDataRepo } from './data/personal-data-repo.js';
import type { UserSessionsRepo } from './data/user-sessions-repo.js';
import type { Mfa } from './identity/mfa/index.js';
import type { DeviceGuard } from './oauth/device-guard.js';
import { trustProxyAs, type ProviderHost } from './oauth/provider-host.js';
import type { EndCredentials } from './identity/self-service/end-credentials.js';
import { createAuthRoutes } from './routes.js';
import { providerPaths } from './oauth/provider-routes.js';
import { baseHeaders } from './kernel/security-headers.js';
import type { UiFactory } from './identity/ui/index.js';
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
  /** Each page's language, translations and brand (ui/). */
  ui: UiFactory;
  /** Outgoing mail (mail/). */
  mailer: Mailer;
  /** Single-use links and codes mailed to people. */
  accountTokens: AccountTokens;
  /** ACCOUNT_MAIL_*: requests that mail someone, per IP and per address. */
  mailRequestLimiter: MailRequestLimiter;
  /** What a change of credential or owner ends, for every door (self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
  /** Transactions that write a link's token and queue the mails carrying it together. */
  db: Pick<Db, 'transaction'>;
  /** The self-service policy (SIGNUP*, PASSWORD_RESET_TTL, …). */
  selfService: AuthConfig['selfService'];
  /** A user's live sessions and grants (account/). */
  userSessions: UserSessionsRepo;
  /** A user's orders and payments; closing an account (account/). */
  personalData: PersonalDataRepo;
  /** The admin console at /console (console/routes.ts). */
  console: Omit<ConsoleDeps, 'ui' | 'logger' | 'formBody' | 'csrfKey'>;
  /** REGISTRATION=open: anonymous registrations limited per IP (provider/registration.ts). */
  openRegistration?: Middleware | undefined;
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
