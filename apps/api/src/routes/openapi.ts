import type { ApiConfig } from '../config.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { z } from '../openapi/zod.js';

export function openApiRoutes(api: ApiRouter, config: ApiConfig): void {
  let document: object | undefined;
  defineRoute(
    api,
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'openApi',
      summary: 'This document',
      tags: ['operations'],
      responses: {
        200: {
          description: 'OpenAPI 3.1',
          content: { 'application/json': { schema: z.object({}).passthrough() } },
        },
      },
    },
    function serveOpenApi(ctx) {
      // Built on first request, when every route has registered itself.
      document ??= buildOpenApiDocument(api.registry, config);
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = document;
    },
  );
}
