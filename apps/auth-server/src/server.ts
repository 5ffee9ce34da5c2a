import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createAttemptLimiter, createSignInLimiter, waitForRedis } from '@portcullis/accounts';
import { createRoleStore, createSharedCatalog, createSharedDenyList } from '@portcullis/db';
import {
  createHttpServer,
  createReadinessCheck,
  drainOnClose,
  EX_CONFIG,
  startingHandler,
  StartupError,
} from '@portcullis/observability';
import { Redis } from 'ioredis';
import { createAdminApp } from './admin/api/app.js';
import { createAlertSender } from './kernel/alerts.js';
import { consoleClientMetadata } from './admin/console/client.js';
import { createAuthApp, type AuthDeps } from './app.js';
import type { AuthConfig } from './kernel/config.js';
import { createRepos } from './data/index.js';
import { createAuthMetrics } from './kernel/metrics.js';
import { INTERACTION_RESUME_COOKIE, SESSION_COOKIE } from './oauth/configuration.js';
import { ID_TOKEN_TTL } from './oauth/lifetimes.js';
import { createClientAuthLimits } from './oauth/client-auth-limits.js';
import { createDeviceGuard } from './oauth/device-guard.js';
import { createMailer } from './identity/mail/mailer.js';
import { createMailOutbox } from './identity/mail/outbox.js';
import { createMailRequestLimiter } from './identity/mail/request-limits.js';
import { openRegistration } from './oauth/registration.js';
import { PROVIDER_ROUTES } from './oauth/provider-routes.js';
import { createMfa } from './identity/mfa/index.js';
import { createKeyManager } from './oauth/keys.js';
import { createProviderHost, type ProviderHost } from './oauth/provider-host.js';
import { createResourceRegistry } from './oauth/resource-registry.js';
import { createLogoutEverywhere } from './oauth/subject-logout.js';
import { loadSecrets } from './kernel/secrets.js';
import { createEndCredentials } from './identity/self-service/end-credentials.js';
import { createVerificationMail } from './identity/self-service/signup-mail.js';
import { createUi } from './identity/ui/index.js';
import { createProviderPages } from './identity/interactions/provider-pages.js';
import { DependencyUnavailableError } from './kernel/unavailable.js';
import { seedDemo } from './seed.js';

export interface RunningAuthServer {
  url: string;
  /** The issuer in use: config.issuer, or the bound URL when config.port is 0 (tests). */
  issuer: string;
  adminUrl: string;
  adminToken: string;
  host: ProviderHost;
  /** Every path each listener serves, as its routers declare them (`/interaction/:uid`). */
  routePaths: { auth: string[]; admin: string[] };
  /** Resolves when side effects of past requests (alerts, audit rows) have finished. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

const PURGE_EVERY_MS = 10 * 60_000;

/** How often an instance rereads `signing_keys` (docs/security.md "Signing keys"). */
export const keyReloadIntervalMs = (publishLeadSeconds: number) =>
  Math.min(30_000, Math.max(500, (publishLeadSeconds * 1000) / 2));

/** A host to reach a listener on: loopback for a wildcard address. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: Server, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** A person at a terminal sees it; a log collector reading a pipe does not. */
export function terminalSecret(
  text: string,
  stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr,
): void {
  if (stream.isTTY === true) stream.write(text);
}

/** The scopes dynamically registered clients may have, when registration is on. */
function registrationScopesOf(config: AuthConfig): string[] {
  const { registration } = config.agentClients;
  return registration.mode === 'off' ? [] : [...registration.scopes];
}

/** The roles this server hands out by configuration: sign-ups' and registered clients'. */
function rolesOfConfig(config: AuthConfig): string[] {
  const { selfService, agentClients } = config;
  return [
    ...new Set([
      ...(selfService.signup === 'open' ? selfService.signupRoles : []),
      ...(agentClients.registration.mode === 'off' ? [] : agentClients.registration.roles),
    ]),
  ];
}

/** Redis commands fail within this many ms instead of hanging a login (fail closed). */
const REDIS_TIMEOUT_MS = 1000;

/** Starts the auth server and the admin API; the port is bound before the Provider is built. */
export async function startAuthServer(
  config: AuthConfig,
  deps: AuthDeps,
  database: Promise<unknown> = Promise.resolve(),
): Promise<RunningAuthServer> {
  const { db, logger } = deps;
  const secrets = await loadSecrets(config);
  if (secrets.generated.includes('admin-token')) {
    // Secrets never reach the log (README "Logs"): it names the file, not the value.
    const file = path.join(config.dataDir, 'admin-token');
    logger.warn({ file }, 'generated an admin token into the file named here');
    (deps.showSecret ?? terminalSecret)(
      `Admin token (generated, shown once; also in ${file}):\n  ${secrets.adminToken}\n`,
    );
  }

  // Bound first (the issuer may depend on the port); answers 503 until the app is built.
  let handler: RequestListener = startingHandler;
  const server = createHttpServer((req, res) => handler(req, res), logger);
  const drain = drainOnClose(server);
  const port = await listen(server, config.port);
  const url = `http://127.0.0.1:${port}`;
  await database;
  const issuer = config.port === 0 ? url : config.issuer;
  // Checked before anything else is opened, so a refusal leaves nothing behind.
  const configuredRoles = rolesOfConfig(config);
  const missingRoles = await createRoleStore(db).unknown(configuredRoles);
  if (missingRoles.length > 0) {
    await new Promise((resolve) => server.close(resolve));
    throw new StartupError(
      `SIGNUP_ROLES or REGISTRATION_ROLES names roles that do not exist: ${missingRoles.join(', ')} (npm run admin -- role:list)`,
      EX_CONFIG,
    );
  }
  // The registered APIs, their permissions and the roles' grants: loaded, then polled.
  const catalog = createSharedCatalog({
    db,
    onError: (e) => logger.error({ err: e }, 'catalogue poll failed'),
  });
  await catalog.start();
  const registry = createResourceRegistry(catalog, config.apiAudience);
  const unknownScopes = registrationScopesOf(config).filter((s) => !registry.scopes.has(s));
  if (unknownScopes.length > 0) {
    await catalog.close();
    await new Promise((resolve) => server.close(resolve));
    throw new StartupError(
      `REGISTRATION_SCOPES names scopes no registered API has: ${unknownScopes.join(', ')} (npm run admin -- resource:list)`,
      EX_CONFIG,
    );
  }

  const pending = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  const redis =
    deps.redis ??
    (config.redisUrl
      ? new Redis(config.redisUrl, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: REDIS_TIMEOUT_MS,
          commandTimeout: REDIS_TIMEOUT_MS,
        })
      : undefined);
  const metrics = createAuthMetrics({ defaultMetrics: config.env !== 'test' });
  const ownsRedis = !deps.redis && redis !== undefined;
  // Commands fail at once until connected (no offline queue): the app is built after, as the API's.
  // Unreachable, it is logged, and what needs it answers 503 (fail closed) until it is back.
  if (ownsRedis) {
    await waitForRedis(redis, REDIS_TIMEOUT_MS * 5).catch((err: unknown) =>
      logger.error({ err }, 'rate-limit store unreachable'),
    );
  }
  const repos = createRepos(db, secrets);
  const { accounts, clients, audit, signingKeys } = repos;
  // Read as well as written, so it is loaded before the first request and then polled.
  const denyList =
    deps.denyList ??
    createSharedDenyList({
      db,
      onError: (e) => logger.error({ err: e }, 'deny list'),
    });
  if (!deps.denyList) await denyList.start();
  const keyManager = createKeyManager(signingKeys, {
    defaultAlg: config.signingAlg,
    retentionSeconds: Math.max(config.accessTokenTtl, ID_TOKEN_TTL) + 10 * 60,
    publishLeadSeconds: config.signingKeyPublishLead,
    ...(deps.now ? { now: deps.now } : {}),
  });
  const ui = createUi(config.ui);
  const providerPages = createProviderPages(ui);
  const deviceGuard = createDeviceGuard(repos.devicePolls, {
    pages: providerPages,
    intervalSeconds: deps.deviceIntervalSeconds ?? 5,
    // RFC 8628 §5.1: five wrong user codes per IP and per browser session in 10 minutes.
    userCodeLimiter: createAttemptLimiter(
      {
        ip: { points: 5, durationSec: 600, onSuccess: 'reward' },
        session: { points: 5, durationSec: 600, onSuccess: 'reward' },
      },
      {
        redis,
        keyPrefix: `${config.redisKeyPrefix}rl:usercode:`,
        unavailable: (cause) => new DependencyUnavailableError('rate-limit store', cause),
      },
    ),
    sessionCookie: SESSION_COOKIE,
    resumeCookie: INTERACTION_RESUME_COOKIE,
  });
  const mfa = createMfa({
    repos,
    accounts,
    audit,
    logger,
    keyEncryptionKey: secrets.keyEncryptionKey,
    // The password's limits (LOGIN_*), counted apart: README "Multi-factor sign-in".
    limiter: createSignInLimiter(config.signIn, {
      redis,
      keyPrefix: `${config.redisKeyPrefix}rl:mfa:`,
      unavailable: (cause) => new DependencyUnavailableError('rate-limit store', cause),
    }),
    rpId: config.webauthnRpId,
    now: deps.now,
    signupVerify: config.selfService.signupVerify,
  });
  if (!config.mail.smtpUrl && config.env === 'production') {
    logger.warn(
      { dir: path.join(config.dataDir, 'mail') },
      'SMTP_URL is not set: mail is not sent, only written to the development mailbox here',
    );
  }
  // Every mail is queued in the database and sent by this instance's worker (docs/mail.md).
  const mailer = createMailOutbox(
    repos.mailOutbox,
    createMailer({
      ...config.mail,
      dataDir: config.dataDir,
      logger,
      logText: config.env !== 'production',
    }),
    logger,
    deps.mailOutbox,
  );
  const host = await createProviderHost({
    issuer,
    logger,
    clientAuthLimiter: createClientAuthLimits(config.clientAuth, {
      redis,
      keyPrefix: `${config.redisKeyPrefix}rl:clientauth:`,
      unavailable: (cause) => new DependencyUnavailableError('rate-limit store', cause),
    }),
    keyManager,
    ...(deps.now ? { now: deps.now } : {}),
    setup: {
      config,
      oidcPayloads: repos.oidcPayloads,
      accounts,
      clients,
      cookieKeys: secrets.cookieKeys,
      deviceGuard,
      denyList,
      interactionPolicy: mfa.interactionPolicy,
      staticClients: () => [...mfa.staticClients(issuer), consoleClientMetadata(issuer)],
      pages: providerPages,
      registry,
    },
    events: {
      logger,
      audit,
      denyList,
      alerts: createAlertSender(config.alertWebhookUrl, logger),
      accessTokenTtl: config.accessTokenTtl,
      track,
      metrics: metrics.grants,
    },
  });

  // The one list of what a reset, a new password or owner, a disabled account ends.
  const endCredentials = createEndCredentials({
    host,
    // oidc-provider's clock, which stamps the artifacts it cuts off (deps.now moves key schedules).
    logoutEverywhere: createLogoutEverywhere(denyList),
    accountTokens: repos.accountTokens,
  });
  let adminUrl = '';
  const checkReady = createReadinessCheck(
    {
      database: repos.ping,
      redis: redis ? () => redis.ping() : undefined,
    },
    {
      draining: () => drain.draining,
      onFailure: (name, err) => logger.warn({ err, dependency: name }, 'not ready'),
    },
  );
  const app = createAuthApp(config, {
    logger,
    console: {
      issuer: () => host.current.issuer,
      tokenEndpoint: () => `${url}${PROVIDER_ROUTES.token}`,
      revocationEndpoint: () => `${url}${PROVIDER_ROUTES.revocation}`,
      async endBrowserSession(ctx) {
        await (await host.current.Session.get(ctx)).destroy();
      },
      adminUrl: () => adminUrl,
      keyEncryptionKey: secrets.keyEncryptionKey,
      stepUpSeconds: config.console.stepUpSeconds,
      status: {
        authReady: checkReady,
        authMetrics: metrics.registry,
        apiUrl: config.console.apiUrl,
      },
      ...(deps.now ? { now: deps.now } : {}),
    },
    host,
    accounts,
    audit,
    deviceGuard,
    cookieKeys: secrets.cookieKeys,
    mfa,
    metrics,
    checkReady,
    signInLimiter: createSignInLimiter(config.signIn, {
      redis,
      keyPrefix: `${config.redisKeyPrefix}rl:signin:`,
      unavailable: (cause) => new DependencyUnavailableError('rate-limit store', cause),
    }),
    ui,
    mailer,
    accountTokens: repos.accountTokens,
    mailRequestLimiter: createMailRequestLimiter(config.selfService.mailLimits, {
      redis,
      keyPrefix: `${config.redisKeyPrefix}rl:mail:`,
      unavailable: (cause) => new DependencyUnavailableError('rate-limit store', cause),
    }),
    selfService: config.selfService,
    endCredentials,
    registry,
    db,
    userSessions: repos.userSessions,
    personalData: repos.personalData,
    openRegistration: openRegistration(
      {
        host,
        path: PROVIDER_ROUTES.registration,
        settings: config.agentClients.registration,
      },
      {
        redis,
        keyPrefix: `${config.redisKeyPrefix}rl:registration:`,
        unavailable: (cause) => new DependencyUnavailableError('rate-limit store', cause),
      },
    ),
  });
  handler = app.callback();

  const adminApp = createAdminApp(
    {
      adminToken: secrets.adminToken,
      host,
      accounts,
      clients,
      audit,
      signingKeys,
      keyManager,
      defaultAlg: config.signingAlg,
      httpsJwksUriOnly: config.env === 'production',
      mfa,
      denyList,
      endCredentials,
      userSessions: repos.userSessions,
      registration: config.agentClients.registration,
      roles: repos.roles,
      resources: repos.resources,
      catalog,
      apiAudience: config.apiAudience,
      configuredRoles,
      // In the deployment's default language: an administrator's request has none of the user's.
      resendVerification: (userId) =>
        createVerificationMail({
          accountTokens: repos.accountTokens,
          accounts,
          mailer,
          issuer,
          selfService: config.selfService,
        }).resend(userId, ui.of({ get: () => '' })),
      ...(deps.now ? { now: deps.now } : {}),
      forceReset: {
        passwordMail: {
          accountTokens: repos.accountTokens,
          mailer,
          ttlSeconds: config.selfService.passwordResetTtl,
          ui,
          issuer: () => host.current.issuer,
        },
      },
    },
    logger,
  );
  const adminServer = createHttpServer(adminApp.callback(), logger);
  const adminDrain = drainOnClose(adminServer);
  const adminPort = await listen(adminServer, config.adminPort, config.adminHost);
  adminUrl = `http://${reachableHost(config.adminHost)}:${adminPort}`;

  if (config.seedDemo) {
    const print = deps.print ?? ((text: string) => process.stdout.write(`${text}\n`));
    if (await seedDemo({ accounts, clients, host, webOrigin: config.demoWebOrigin, print }))
      logger.info('demo data seeded');
  }

  const timers = [
    setInterval(
      () =>
        void repos.oidcPayloads
          .purgeExpired()
          .catch((e: unknown) => logger.error({ err: e }, 'purge failed')),
      PURGE_EVERY_MS,
    ),
    // Another instance may have rotated the keys; the host's own timer applies scheduled changes.
    setInterval(
      () =>
        void host
          .refreshKeys()
          .catch((e: unknown) => logger.error({ err: e }, 'key reload failed')),
      keyReloadIntervalMs(config.signingKeyPublishLead),
    ),
  ];
  for (const t of timers) t.unref();
  mailer.start();

  logger.info({ url, issuer, admin: adminUrl }, 'authorization server listening');

  return {
    url,
    issuer,
    adminUrl,
    adminToken: secrets.adminToken,
    host,
    routePaths: { auth: app.routePaths, admin: adminApp.routePaths },
    async settle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    async close() {
      for (const t of timers) clearInterval(t);
      host.close();
      await Promise.allSettled([drain.close(), adminDrain.close()]);
      await Promise.allSettled([...pending]);
      await mailer.close();
      if (!deps.denyList) await denyList.close();
      await catalog.close();
      if (ownsRedis) redis?.disconnect();
    },
  };
}
