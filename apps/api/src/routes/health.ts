import { readinessEndpoint } from '@portcullis/observability';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { z } from '../openapi/zod.js';
import type { RouteDeps } from './deps.js';

// The body also names `redis` when REDIS_URL is set (not yet in the document: adding it
// changes packages/client's generated types, regenerated with the next client change).
const Status = z.object({ status: z.string(), database: z.string().optional() });

export function healthRoutes(api: ApiRouter, deps: RouteDeps): void {
  defineRoute(
    api,
    {
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      summary: 'Liveness',
      tags: ['operations'],
      responses: {
        200: {
          description: 'The process is up',
          content: { 'application/json': { schema: Status } },
        },
      },
    },
    function liveness(ctx) {
      ctx.body = { status: 'ok' };
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/readyz',
      operationId: 'ready',
      summary: 'Readiness (database reachable)',
      tags: ['operations'],
      responses: {
        200: { description: 'Ready', content: { 'application/json': { schema: Status } } },
        503: { description: 'Not ready', content: { 'application/json': { schema: Status } } },
      },
    },
    readinessEndpoint(deps.checkReady),
  );
}
