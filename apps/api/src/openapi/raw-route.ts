import type { Middleware } from 'koa';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { ApiState } from '../middleware/authenticate.js';
import { guardsOf, SECURITY_SCHEMES, type ApiRouter } from './define-route.js';
import type { Permission } from '../permissions.js';

/**
 * A route whose body is not JSON (multipart uploads, a pre-signed PUT, an event
 * stream), so defineRoute's JSON validation does not apply: the OpenAPI description is
 * given whole, and the handler reads the request itself. With a permission it runs
 * after authentication and the permission check, as for defineRoute; without one it is
 * public (the pre-signed PUT carries its own signature).
 */
export function defineRawRoute(
  api: ApiRouter,
  spec: Omit<RouteConfig, 'path' | 'security'> & { path: string; permission?: Permission },
  handler: Middleware<ApiState>,
): void {
  const { permission, path, ...route } = spec;
  api.registry.registerPath({
    ...route,
    path: path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'),
    security: permission
      ? SECURITY_SCHEMES.map((name) => ({ [name]: name === 'oauth2' ? [permission] : [] }))
      : [],
    ...(permission ? { 'x-permission': permission } : {}),
  });
  const chain = [...guardsOf(api, permission), handler];
  api.router.register(path, [spec.method.toUpperCase()], chain as never, {
    name: spec.operationId ?? path,
  });
}
