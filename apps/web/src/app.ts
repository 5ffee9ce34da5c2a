import Koa from 'koa';
import Router from '@koa/router';
import { portcullisEndpoints } from '@portcullis/client';
import type { Logger } from 'pino';
import { authRoutes, type Rotation } from './auth-routes.js';
import type { WebConfig } from './config.js';
import { createRefreshCoordinator } from './refresh-coordinator.js';
import { createCookieSealer } from './sealed-cookie.js';
import { securityHeaders } from './security-headers.js';
import { staticFiles } from './static-files.js';

export interface WebDeps {
  logger: Logger;
  cookieKeys: readonly string[];
  /** How long a rotated refresh token still yields its rotation's result; default 10 s. */
  refreshGraceMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
  pageDir?: URL;
}

const PUBLIC_DIR = new URL('../public/', import.meta.url);
const PUBLIC_FILES = ['index.html', 'style.css'];
/** The page's bundles (infra/scripts/build.mjs, buildPage): src/page on the client SDK. */
export const PAGE_DIR = new URL('../dist/page/', import.meta.url);
const PAGE_FILES = ['app.js', 'dpop.js'];

/** The browser demo: static files, /config.json and the BFF's /auth routes; never an API proxy. */
export function createWebApp(config: WebConfig, deps: WebDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  const router = new Router();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/config.json', function spaConfig(ctx) {
    ctx.set('Cache-Control', 'no-cache');
    // tokenUrl: the `htu` of the proofs the page makes for the BFF's token requests.
    ctx.body = {
      apiUrl: config.apiUrl,
      issuer: config.issuer,
      tokenUrl: portcullisEndpoints(config.issuer).tokenEndpoint,
    };
  });
  authRoutes(router, config, {
    logger: deps.logger,
    sealer: createCookieSealer(deps.cookieKeys, deps.now),
    refreshes: createRefreshCoordinator<Rotation>({
      graceMs: deps.refreshGraceMs ?? 10_000,
      ...(deps.now ? { now: deps.now } : {}),
    }),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });

  app.use(async function renderErrors(ctx, next) {
    try {
      await next();
    } catch (err) {
      deps.logger.error({ err, path: ctx.path }, 'request failed');
      ctx.status = 500;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'internal_error' };
    }
  });
  app.use(
    securityHeaders({
      apiOrigin: new URL(config.apiUrl).origin,
      hsts: config.env === 'production',
    }),
  );
  app.use(staticFiles(PUBLIC_DIR, PUBLIC_FILES));
  app.use(staticFiles(deps.pageDir ?? PAGE_DIR, PAGE_FILES));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
