import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { bodyFailureOf, logAppErrors, refuseNul, routePaths } from '@portcullis/observability';
import type { Logger } from 'pino';
import { auditWithActor, createActorStore, requireAdmin } from './auth.js';
import { adminErrors, AdminError } from './errors.js';
import { factorRoutes } from './factor-routes.js';
import { forceResetRoutes } from './force-reset-routes.js';
import { adminRoutes, type AdminDeps } from './routes.js';
import { sessionRoutes } from './session-routes.js';
import { registrationRoutes } from './registration-routes.js';
import { resourceRoutes } from './resource-routes.js';
import { roleRoutes } from './role-routes.js';
import { userRoutes } from './user-routes.js';

/**
 * The admin API (ADMIN_PORT, bound to 127.0.0.1): every route needs the admin token or an
 * administrator's console token; each audit entry a route writes names that actor.
 */
export function createAdminApp(given: AdminDeps, logger: Logger): Koa & { routePaths: string[] } {
  const actors = createActorStore();
  const deps: AdminDeps = { ...given, audit: auditWithActor(given.audit, actors) };
  const app = new Koa();
  app.on('error', logAppErrors(logger));
  const router = new Router();
  adminRoutes(router, deps);
  factorRoutes(router, deps);
  userRoutes(router, deps);
  if (deps.forceReset) forceResetRoutes(router, { ...deps, ...deps.forceReset });
  sessionRoutes(router, deps);
  registrationRoutes(router, deps);
  roleRoutes(router, deps);
  resourceRoutes(router, deps);
  app.use(adminErrors(logger));
  app.use(async function noStore(ctx, next) {
    ctx.set('Cache-Control', 'no-store');
    await next();
  });
  app.use(requireAdmin(deps, actors));
  // A body of another type would be ignored, and validation would report missing fields.
  app.use(async function requireJson(ctx, next) {
    const hasBody = ctx.get('Transfer-Encoding') !== '' || (ctx.request.length ?? 0) > 0;
    const writes = ['POST', 'PUT', 'PATCH'].includes(ctx.method);
    if (hasBody && writes && !ctx.request.is('application/json', 'application/merge-patch+json')) {
      throw new AdminError('unsupported_media_type', 'request bodies must be application/json');
    }
    await next();
  });
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: '64kb',
      onError(error, ctx) {
        const failure = bodyFailureOf(error, ctx.get('Content-Encoding'));
        throw new AdminError(failure.code, failure.message);
      },
    }),
  );
  // PostgreSQL cannot store a NUL in text (README "Bad input").
  app.use(
    refuseNul({
      refuse() {
        throw new AdminError('invalid_request', 'the request contains a NUL character');
      },
    }),
  );
  // Around the router: allowedMethods sets 405 once the routes have run.
  app.use(async function notFound(ctx, next) {
    await next();
    if (ctx.status === 404 && !ctx.body) throw new AdminError('not_found', 'no such endpoint');
  });
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return Object.assign(app, { routePaths: routePaths(router) });
}
