import {
  API_SCOPE,
  PROTECTED_RESOURCE_METADATA_PATH,
  protectedResourceMetadata,
} from '@portcullis/claims';
import { API_DPOP_ALGORITHMS } from '../auth/dpop.js';
import type { ApiConfig } from '../config.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { z } from '../openapi/zod.js';
import { API_SCOPES } from '../permissions.js';

const Metadata = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    dpop_signing_alg_values_supported: z.array(z.string()).optional(),
    dpop_bound_access_tokens_required: z.boolean(),
    resource_documentation: z.string().optional(),
  })
  .passthrough();

/**
 * The API's RFC 9728 metadata: the audience, issuer and DPoP algorithms its token checks use,
 * and `api` with the permissions registered for it (docs/roles.md), else those its code declares.
 */
export function apiResourceMetadata(config: ApiConfig, registered?: readonly string[]) {
  return protectedResourceMetadata({
    resource: config.audience,
    authorizationServers: [config.issuer],
    scopes: registered ? [API_SCOPE, ...registered] : API_SCOPES,
    dpopAlgorithms: API_DPOP_ALGORITHMS,
    documentation: `${config.audience.replace(/\/+$/, '')}/openapi.json`,
  });
}

export function resourceMetadataRoutes(
  api: ApiRouter,
  config: ApiConfig,
  registeredPermissions?: () => readonly string[],
): void {
  const path = new URL(config.audience).pathname.replace(/\/+$/, '');
  // RFC 9728 §3.1: an audience with a path has its metadata at the path-suffixed URL.
  const paths = [PROTECTED_RESOURCE_METADATA_PATH];
  if (path !== '') paths.push(`${PROTECTED_RESOURCE_METADATA_PATH}${path}`);
  for (const [i, routePath] of paths.entries()) {
    defineRoute(
      api,
      {
        method: 'get',
        path: routePath,
        operationId: i === 0 ? 'protectedResourceMetadata' : 'protectedResourceMetadataOfPath',
        summary: 'OAuth 2.0 Protected Resource Metadata (RFC 9728)',
        tags: ['operations'],
        responses: {
          200: {
            description: 'Who issues tokens for this API, and how to present them',
            content: { 'application/json': { schema: Metadata } },
          },
        },
      },
      function serveResourceMetadata(ctx) {
        ctx.set('Cache-Control', 'public, max-age=300');
        ctx.body = apiResourceMetadata(config, registeredPermissions?.());
      },
    );
  }
}
