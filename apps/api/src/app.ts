import Koa, { type Middleware } from 'koa';
import cors from '@koa/cors';
import {
  createAccessTokenVerifier,
  createJwtPrincipalResolver,
  createMemoryReplayStore,
  createRemoteKeySet,
  createTokenCache,
  type DpopReplayStore,
  type DpopVerifier,
  type PrincipalResolver,
  type RoleSource,
} from '@portcullis/claims';
import type { Db, SharedDenyList } from '@portcullis/db';
import {
  createReadinessCheck,
  indexRoutesByFirstSegment,
  logAppErrors,
  refuseNul,
  requestLog,
} from '@portcullis/observability';
import type { Logger } from 'pino';
import { apiChallengeOf } from './auth/challenge.js';
import { credentialGuard, credentialResolvers } from './auth/credentials.js';
import { createApiDpopVerifier } from './auth/dpop.js';
import { endSessionsOnSubjectRevocation } from './auth/subject-revocation.js';
import type { ApiConfig } from './config.js';
import { createRepos, type Repos } from './data/index.js';
import { createEventBus, type EventBus } from './events/bus.js';
import { BadRequestError } from './errors.js';
import { parseBodies } from './http/body-parser.js';
import { createCursorCodec } from './http/cursor.js';
import { authenticate, type ApiState } from './middleware/authenticate.js';
import { renderErrors } from './middleware/render-errors.js';
import { requireJsonBody } from './middleware/require-json.js';
import { securityHeaders } from './middleware/security-headers.js';
import type { ApiRouter } from './openapi/define-route.js';
import { FakePaymentProvider } from './payments/fake-provider.js';
import type { PaymentProvider } from './payments/provider.js';
import { createApiMetrics } from './metrics.js';
import { createApiRoutes } from './routes/index.js';
import { createRateLimiters, type RateLimiters } from './rate-limits.js';
import { skipJsonForUploads } from './routes/uploads.js';
import { LocalDiskStorage } from './storage/local-disk.js';
import { createS3Client, S3Storage } from './storage/s3.js';
import { createUrlSigner } from './storage/presign.js';
import type { BlobStorage } from './storage/storage.js';

export interface ApiDeps {
  db: Db;
  logger: Logger;
  /** Revocations read on every request; must be started (one over the database denies until loaded). */
  denyList: Pick<SharedDenyList, 'isDenied' | 'denySubject' | 'denyToken'> &
    Partial<Pick<SharedDenyList, 'onRevocation' | 'size'>>;
  /**
   * The roles' permissions (server.ts gives the catalogue's, polled); required without
   * `resolvers`. With `permissions`, the API's registered ones are its RFC 9728 scopes.
   */
  roles?: RoleSource & { permissions?(): readonly string[] };
  /** Credential resolvers in order. Default: API keys, sessions, then JWTs checked against config.jwksUrl/issuer/audience. */
  resolvers?: PrincipalResolver[];
  /** Milliseconds clock for token checks and timestamps; tests may freeze it. */
  now?: () => number;
  /** Login, API-key and anonymous limits. Default: in-process. */
  rateLimiters?: RateLimiters;
  /** Default: the FakePaymentProvider (no real PSP is integrated yet). */
  paymentProvider?: PaymentProvider;
  eventBus?: EventBus;
  storage?: BlobStorage;
  /** True once shutdown began (server.ts): /readyz then answers 503. */
  draining?: () => boolean;
  /** DPoP proof `jti`s seen; Redis with REDIS_URL so a proof is accepted once across instances. */
  dpopReplay?: DpopReplayStore;
}

const METRICS_PATH = /^\/metrics\/?$/i;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const routeTables = new WeakMap<Koa<ApiState>, ApiRouter>();

/** The router and OpenAPI registry an app was built with (for route-coverage tests). */
export function routesOf(app: Koa<ApiState>): ApiRouter | undefined {
  return routeTables.get(app);
}

/** API keys, sessions, then JWTs, each turning the caller's roles into permissions through `roles`. */
function defaultResolvers(
  config: ApiConfig,
  deps: ApiDeps,
  services: { repos: Repos; limiters: RateLimiters; clock: () => Date; dpop: DpopVerifier },
): PrincipalResolver[] {
  const { roles } = deps;
  if (!roles) throw new TypeError('ApiDeps.roles is required unless resolvers are given');
  const { repos, limiters, clock, dpop } = services;
  const verifier = createAccessTokenVerifier({
    issuer: config.issuer,
    audience: config.audience,
    keys: createRemoteKeySet(config.jwksUrl, deps.now ? { now: deps.now } : {}),
    cache: createTokenCache(),
    denyList: deps.denyList,
    ...(deps.now ? { now: deps.now } : {}),
  });
  return [
    ...credentialResolvers(config, { repos, limiters, clock, roles, denyList: deps.denyList }),
    createJwtPrincipalResolver(verifier, {
      dpop,
      // Its tokens carry scope `api`: the roles' permissions are the table's, read at each request.
      roles,
      // Per subject, like API keys per key: one caller's flood is its own 429.
      limit: (claims) => limiters.consume('jwt', claims.sub),
    }),
  ];
}

function defaultStorage(config: ApiConfig, repos: Repos, now: () => number): BlobStorage {
  const configured = config.uploads.signingKey;
  const key = configured
    ? () => Promise.resolve(Buffer.from(configured))
    : () => repos.secrets.get('upload-signing');
  const signer = createUrlSigner(key, now);
  const { s3 } = config.uploads;
  if (s3) return new S3Storage(createS3Client(s3), s3.bucket, signer, now);
  return new LocalDiskStorage(config.uploads.dir, signer, now);
}

/** The API as composeApi built it: the app, and a close for what it made beyond `deps`. */
export interface ComposedApi {
  app: Koa<ApiState>;
  /** Stops the subject-revocation listener and closes the event bus it made (none given). */
  close(): Promise<void>;
}

/** The API (resource server)'s Koa app alone, for route-table tests; server.ts composes and listens. */
export function createApiApp(config: ApiConfig, deps: ApiDeps): Koa<ApiState> {
  return composeApi(config, deps).app;
}

/**
 * The API's composition root: repositories, services and routes are built here once, from
 * `deps`; everything else receives them.
 */
export function composeApi(config: ApiConfig, deps: ApiDeps): ComposedApi {
  const app = new Koa<ApiState>();
  app.proxy = config.trustProxy;
  // Errors Koa sees after a response began (a streamed body or SSE whose client left).
  app.on('error', logAppErrors(deps.logger));
  const now = deps.now ?? Date.now;
  const repos = createRepos(deps.db);
  // Open event streams end when the bus closes, so closing the server does not wait on them.
  const ownEventBus = deps.eventBus
    ? undefined
    : createEventBus({
        events: repos.events,
        pollMs: config.streams.pollMs,
        onError: (err) => deps.logger.error({ err }, 'event poll failed'),
      });
  const eventBus = deps.eventBus ?? ownEventBus!;
  const stopEndingSessions = endSessionsOnSubjectRevocation(deps.denyList, {
    sessions: repos.sessions,
    logger: deps.logger,
    now,
  });
  const clock = () => new Date(now());
  const { metrics, limiters } = createApiMetrics({
    limiters: deps.rateLimiters ?? createRateLimiters({ settings: config.rateLimits }),
    denyList: deps.denyList,
    // Process metrics start timers: only for real servers, not per test app.
    defaultMetrics: config.env !== 'test',
  });
  const dpop = createApiDpopVerifier(config, {
    replay: deps.dpopReplay ?? createMemoryReplayStore(),
    nonceSecret: () => repos.secrets.get('dpop-nonce'),
    now,
  });
  const storage = deps.storage ?? defaultStorage(config, repos, now);
  const api = createApiRoutes(
    config,
    {
      repos,
      logger: deps.logger,
      clock: () => new Date(now()),
      userCursors: createCursorCodec(() => repos.secrets.get('cursor-hmac'), 'users'),
      checkReady: createReadinessCheck(
        {
          database: () => deps.db.raw('select 1'),
          redis: limiters.store === 'redis' ? () => limiters.ping() : undefined,
        },
        {
          ...(deps.draining ? { draining: deps.draining } : {}),
          onFailure: (name, err) => deps.logger.warn({ err, dependency: name }, 'not ready'),
        },
      ),
      credentials: { limiters, revocations: deps.denyList },
      onRevocation: deps.denyList.onRevocation?.bind(deps.denyList),
      paymentProvider: deps.paymentProvider ?? new FakePaymentProvider(),
      eventBus,
      storage,
      registeredPermissions: deps.roles?.permissions?.bind(deps.roles),
    },
    authenticate(
      deps.resolvers ?? defaultResolvers(config, deps, { repos, limiters, clock, dpop }),
      { publicUrl: config.dpop.publicUrl, nonces: dpop.nonces, challenge: apiChallengeOf(config) },
    ),
  );

  // Prometheus scrapes /metrics without credentials: keep the port off the public internet.
  const serveMetrics: Middleware<ApiState> = function serveMetrics(ctx, next) {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !METRICS_PATH.test(ctx.path)) {
      return next();
    }
    (ctx as { _matchedRoute?: string })._matchedRoute = '/metrics';
    return metrics.handler(ctx, next);
  };
  const allowed = new Set(config.corsOrigins);
  // Only these methods carry a body the API reads (the body parser's own list).
  const requireJson = skipJsonForUploads(requireJsonBody(['/login']));
  const parse = parseBodies();
  const readBodies: Middleware<ApiState> = function readBodies(ctx, next) {
    if (!BODY_METHODS.has(ctx.method)) return next();
    return requireJson(ctx, () => parse(ctx, next));
  };
  const allowCors = cors({
    // '' means "no CORS headers": unknown origins get nothing to read the response with.
    origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    allowHeaders: [
      'Authorization',
      'Content-Type',
      'If-Match',
      'If-None-Match',
      'Idempotency-Key',
      'Last-Event-ID',
      'DPoP',
    ],
    exposeHeaders: [
      'ETag',
      'Location',
      'Retry-After',
      'WWW-Authenticate',
      'X-Request-Id',
      'Idempotent-Replayed',
      'DPoP-Nonce',
    ],
    maxAge: 600,
  });
  // Requests from no allowed origin get only Vary: Origin, as @koa/cors would give them.
  const corsForAllowedOrigins: Middleware<ApiState> = function corsForAllowedOrigins(ctx, next) {
    const origin = ctx.req.headers.origin;
    if (origin !== undefined && allowed.has(origin)) return allowCors(ctx, next);
    if (ctx.res.hasHeader('Vary')) ctx.vary('Origin');
    else ctx.res.setHeader('Vary', 'Origin');
    return next();
  };
  app
    .use(metrics.middleware)
    .use(
      requestLog(deps.logger, {
        subjectOf: (ctx) => (ctx.state as ApiState).principal?.subject,
        quietPaths: ['/healthz', '/readyz', '/metrics'],
      }),
    )
    .use(securityHeaders({ hsts: config.env === 'production' }))
    .use(corsForAllowedOrigins)
    .use(renderErrors(deps.logger, apiChallengeOf(config)))
    .use(serveMetrics)
    .use(credentialGuard(config, limiters))
    .use(readBodies)
    .use(
      refuseNul({
        refuse() {
          throw new BadRequestError('invalid_request', 'the request contains a NUL character');
        },
      }),
    )
    .use(indexRoutesByFirstSegment(api.router).routes())
    .use(api.router.allowedMethods());
  routeTables.set(app, api);
  return {
    app,
    async close() {
      stopEndingSessions?.();
      await ownEventBus?.close();
    },
  };
}
