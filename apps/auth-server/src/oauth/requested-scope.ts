import { decodeJwt } from 'jose';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { unknownScope } from './claims.js';
import type { ResourceRegistry } from './resource-registry.js';

const OFFLINE_ACCESS = 'offline_access';

/** The scope as the client sent it: from the pushed request, else the form or the query. */
function sentScope(ctx: KoaContextWithOIDC): string | undefined {
  const pushed = (ctx.oidc.entities as { PushedAuthorizationRequest?: { request?: string } })
    .PushedAuthorizationRequest?.request;
  const source: Record<string, unknown> | undefined = pushed
    ? decodeJwt(pushed)
    : ctx.method === 'POST'
      ? (ctx.oidc.body as Record<string, unknown> | undefined)
      : ctx.query;
  return typeof source?.['scope'] === 'string' ? source['scope'] : undefined;
}

/** The `scope` validator (docs/architecture.md "Provider extensions"). */
export async function checkRequestedScope(
  ctx: KoaContextWithOIDC,
  value: unknown,
  client: { grantTypeAllowed(type: string): boolean; scope?: string } | undefined,
  registry: ResourceRegistry,
): Promise<void> {
  const scope = typeof value === 'string' ? value : '';
  const unknown = unknownScope(scope, registry);
  if (unknown !== undefined)
    throw new errors.InvalidScope('requested scope is not supported', unknown);
  const scopes = scope.split(' ').filter(Boolean);
  if (
    !scopes.includes(OFFLINE_ACCESS) &&
    client?.grantTypeAllowed('refresh_token') &&
    (!client.scope || client.scope.split(' ').includes(OFFLINE_ACCESS)) &&
    sentScope(ctx)?.split(' ').includes(OFFLINE_ACCESS)
  ) {
    (ctx.oidc.params as { scope?: string }).scope = [...scopes, OFFLINE_ACCESS].join(' ');
  }
}
