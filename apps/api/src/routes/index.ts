import Router from '@koa/router';
import { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ApiConfig } from '../config.js';
import { apiChallengeOf } from '../auth/challenge.js';
import type { ApiState, Authenticate } from '../middleware/authenticate.js';
import type { ApiRouter } from '../openapi/define-route.js';
import { apiKeyRoutes } from './api-keys.js';
import type { RouteDeps } from './deps.js';
import { eventsRoutes } from './events.js';
import { healthRoutes } from './health.js';
import { openApiRoutes } from './openapi.js';
import { orderActionRoutes } from './order-actions.js';
import { ordersRoutes } from './orders.js';
import { paymentsRoutes } from './payments.js';
import { resourceMetadataRoutes } from './resource-metadata.js';
import { sessionRoutes } from './sessions.js';
import { streamRoutes } from './stream.js';
import { uploadDirectRoutes } from './upload-direct.js';
import { uploadsRoutes } from './uploads.js';
import { usersRoutes } from './users.js';

/**
 * Every route of the API, one resource module per line below. Each module mounts its routes
 * and describes them in the OpenAPI registry in the same call: `GET /openapi.json` lists
 * each path with its permission (`x-permission`) and step-up rule.
 */
export function createApiRoutes(
  config: ApiConfig,
  deps: RouteDeps,
  authenticate: Authenticate,
): ApiRouter {
  const api: ApiRouter = {
    router: new Router<ApiState>(),
    registry: new OpenAPIRegistry(),
    authenticate,
    stepUp: config.stepUp,
    challenge: apiChallengeOf(config),
  };
  healthRoutes(api, deps);
  openApiRoutes(api, config);
  resourceMetadataRoutes(api, config, deps.registeredPermissions);
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
