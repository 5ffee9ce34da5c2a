import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { bodyFailureOf, logAppErrors, refuseNul } from '@portcullis/observability';
import type { Logger } from 'pino';
import { adminErrors, AdminError } from './errors.js';
import { factorRoutes } from './factor-routes.js';
import { adminRoutes, requireAdminToken, type AdminDeps } from './routes.js';

/** The admin API (ADMIN_PORT, bound to 127.0.0.1): every route needs the admin token. */
export function createAdminApp(deps: AdminDeps, logger: Logger): Koa {
  const app = new Koa();
  app.on('error', logAppErrors(logger));
  const router = new Router();
  adminRoutes(router, deps);
  factorRoutes(router, deps);
  app.use(adminErrors(logger));
  app.use(async function noStore(ctx, next) {
    ctx.set('Cache-Control', 'no-store');
    await next();
  });
  app.use(requireAdminToken(deps.adminToken));
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: '64kb',
      onError(error, ctx) {
        const failure = bodyFailureOf(error, ctx.get('Content-Encoding'));
        const code = failure.status === 413 ? 'payload_too_large' : 'bad_request';
        throw new AdminError(failure.status, code, failure.message);
      },
    }),
  );
  // PostgreSQL cannot store a NUL in text (README "Bad input").
  app.use(
    refuseNul({
      refuse() {
        throw new AdminError(400, 'bad_request', 'the request contains a NUL character');
      },
    }),
  );
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  app.use(async function notFound(ctx) {
    if (ctx.status === 404 && !ctx.body) throw new AdminError(404, 'not_found', 'no such endpoint');
  });
  return app;
}
