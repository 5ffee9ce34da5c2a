import Router from '@koa/router';
import { readinessEndpoint } from '@portcullis/observability';
import { selfServiceRoutes, type SelfServiceParts } from './identity/account/index.js';
import { consoleRoutes } from './admin/console/routes.js';
import { formBody } from './kernel/form-body.js';
import { interactionErrors } from './identity/interactions/errors.js';
import { checkCsrf, csrfToken, interactionRoutes } from './identity/interactions/routes.js';
import { passwordRoutes } from './identity/self-service/password-routes.js';
import {
  rolesOnVerification,
  unverifiedAddressPage,
} from './identity/self-service/signup-doors.js';
import { createVerificationMail } from './identity/self-service/signup-mail.js';
import { signupRoutes } from './identity/self-service/signup-routes.js';
import type { AppMetrics, ReadinessReport } from '@portcullis/observability';
import type { Middleware } from 'koa';
import type { DeviceGuard } from './oauth/device-guard.js';
import type { ResourceRegistry } from './oauth/resource-registry.js';
import type { ConsoleDeps } from './admin/console/routes.js';

/** The parts the Koa app is wired from (built by server.ts). */
export interface AuthAppParts extends Omit<SelfServiceParts, 'csrfKey'> {
  deviceGuard: DeviceGuard;
  cookieKeys: string[];
  /** This app's Prometheus registry and HTTP middleware (GET /metrics). */
  metrics: AppMetrics;
  /** GET /readyz: database and, with REDIS_URL, Redis. */
  checkReady: () => Promise<ReadinessReport>;
  /** The admin console at /console (admin/console/routes.ts). */
  console: Omit<ConsoleDeps, 'ui' | 'logger' | 'formBody' | 'csrfKey'>;
  /** REGISTRATION=open: anonymous registrations limited per IP (oauth/registration.ts). */
  openRegistration?: Middleware | undefined;
  /** The registered APIs: the consent page names their permissions. */
  registry: Pick<ResourceRegistry, 'find'>;
}

/** Every route of the auth server's own; app.ts puts them in front of oidc-provider. */
export function createAuthRoutes(parts: AuthAppParts) {
  // GET /healthz, /readyz, /metrics.
  const operational = new Router();
  operational.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  operational.get('/readyz', readinessEndpoint(parts.checkReady));
  // Prometheus scrapes without credentials: keep the port internal or filter at the edge.
  operational.get('/metrics', parts.metrics.handler);

  // The HTML pages, their errors rendered as pages.
  const pages = new Router();
  pages.use(interactionErrors(parts.logger, parts.ui));
  pages.use(unverifiedAddressPage(parts.ui));
  const csrfKey = parts.cookieKeys[0]!;
  // /interaction/:uid/{totp,recovery,totp/*,passkey/*}, /account/*, /passkeys.js (mfa/).
  const mfa = parts.mfa.routes(pages, {
    host: parts.host,
    csrfKey,
    csrfToken: (uid) => csrfToken(csrfKey, uid),
    checkCsrf: (uid, presented) => checkCsrf(csrfKey, uid, presented),
    ui: parts.ui,
    endCredentials: parts.endCredentials,
  });
  // /account/{password,email,sessions,apps,data,close} (account/).
  selfServiceRoutes(pages, { ...parts, csrfKey });
  // /interaction/:uid and its login, confirm and abort (identity/interactions/routes.ts).
  interactionRoutes(pages, {
    host: parts.host,
    accounts: parts.accounts,
    audit: parts.audit,
    logger: parts.logger,
    signInLimiter: parts.signInLimiter,
    csrfKey,
    mfa,
    ui: parts.ui,
    selfService: parts.selfService,
    registry: parts.registry,
  });
  // /password/forgot and /password/reset (identity/self-service/password-routes.ts).
  passwordRoutes(pages, {
    host: parts.host,
    accounts: parts.accounts,
    accountTokens: parts.accountTokens,
    audit: parts.audit,
    mailer: parts.mailer,
    mailRequestLimiter: parts.mailRequestLimiter,
    endCredentials: parts.endCredentials,
    ui: parts.ui,
    logger: parts.logger,
    csrfKey,
    passwordResetTtl: parts.selfService.passwordResetTtl,
    rolesOnVerification: rolesOnVerification(parts.selfService),
  });
  // /signup, /signup/verify, /signup/resend (identity/self-service/signup-routes.ts).
  signupRoutes(pages, {
    host: parts.host,
    accounts: parts.accounts,
    audit: parts.audit,
    logger: parts.logger,
    ui: parts.ui,
    mail: createVerificationMail({ ...parts, issuer: parts.host.current.issuer }),
    mailRequestLimiter: parts.mailRequestLimiter,
    selfService: parts.selfService,
    csrfKey,
  });
  // /console and its sections (admin/console/routes.ts).
  consoleRoutes(pages, {
    ...parts.console,
    ui: parts.ui,
    logger: parts.logger,
    csrfKey,
    formBody: formBody('64kb'),
  });
  return { operational, pages };
}
