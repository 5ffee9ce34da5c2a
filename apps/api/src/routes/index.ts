import type { Middleware } from 'koa';
import Router from '@koa/router';
import { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ApiConfig } from '../config.js';
import type { ApiState } from '../middleware/authenticate.js';
import type { ApiRouter } from '../openapi/define-route.js';
import { apiKeyRoutes } from './api-keys.js';
import type { RouteDeps } from './deps.js';
import { eventsRoutes } from './events.js';
import { healthRoutes } from './health.js';
import { openApiRoutes } from './openapi.js';
import { orderActionRoutes } from './order-actions.js';
import { ordersRoutes } from './orders.js';
import { paymentsRoutes } from './payments.js';
import { sessionRoutes } from './sessions.js';
import { streamRoutes } from './stream.js';
import { uploadDirectRoutes } from './upload-direct.js';
import { uploadsRoutes } from './uploads.js';
import { usersRoutes } from './users.js';

/**
 * Every path of the API, on one screen. Each resource module mounts its routes and
 * describes them in the OpenAPI registry in the same call.
 *
 *   GET    /healthz  /readyz  /openapi.json                         public
 *   GET    /orders              GET /orders/:id                     orders:read
 *   POST   /orders              PUT|PATCH /orders/:id               orders:write
 *   POST   /orders/:id/cancel   POST /orders/:id/confirm            orders:write
 *   POST   /orders/:id/fulfill                                      orders:*
 *   DELETE /orders/:id                                              orders:delete
 *   GET    /users               GET /users/:id                      users:read
 *   DELETE /users/:id                                               users:delete + step-up
 *   POST   /login   POST /logout (sid cookie)                       public
 *   POST   /logout/all                                             any user (session or token)
 *   GET    /api-keys            GET /api-keys/:id                   api-keys:read   (users only)
 *   POST   /api-keys                                               api-keys:create + step-up (users only)
 *   DELETE /api-keys/:id                                           api-keys:delete (users only)
 *   POST   /payments  (Idempotency-Key)                             payments:create (+ step-up above STEP_UP_PAYMENT_AMOUNT)
 *   GET    /payments            GET /payments/:id                  payments:read   (own; payments:* all)
 *   GET    /events              GET /stream (SSE)                  events:read     (own; <resource>:* all)
 *   POST   /uploads (multipart) POST /uploads/presign              uploads:create
 *   GET    /uploads/:id         GET /uploads/:id/content           uploads:read    (own; uploads:* all)
 *   PUT    /uploads/direct/:id?expires&sig                         the signature (once, until it expires)
 */
export function createApiRoutes(
  config: ApiConfig,
  deps: RouteDeps,
  authenticate: Middleware<ApiState>,
): ApiRouter {
  const api: ApiRouter = {
    router: new Router<ApiState>(),
    registry: new OpenAPIRegistry(),
    authenticate,
    stepUp: config.stepUp,
  };
  healthRoutes(api, deps);
  openApiRoutes(api, config);
  ordersRoutes(api, deps);
  orderActionRoutes(api, deps);
  usersRoutes(api, deps);
  sessionRoutes(api, deps, config);
  apiKeyRoutes(api, deps, config);
  paymentsRoutes(api, deps);
  eventsRoutes(api, deps);
  streamRoutes(api, deps, config);
  uploadsRoutes(api, deps, config);
  uploadDirectRoutes(api, deps, config);
  return api;
}
