import Koa from 'koa';
import Router from '@koa/router';
import type { Db } from '@portcullis/db';
import type { Logger } from 'pino';
import type { AuthConfig } from './config.js';

export interface AuthDeps {
  db: Db;
  logger: Logger;
}

/** Builds the authorization server's Koa app; only server.ts listens. */
export function createAuthApp(config: AuthConfig, deps: AuthDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  const router = new Router();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async function readiness(ctx) {
    try {
      await deps.db.raw('select 1');
      ctx.body = { status: 'ready', database: 'ok' };
    } catch (error) {
      deps.logger.warn({ err: error }, 'readiness check failed');
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { status: 'unavailable', database: 'unreachable' };
    }
  });

  app.use(router.routes()).use(router.allowedMethods());
  void config;
  return app;
}
