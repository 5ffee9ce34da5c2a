import { decodeJwt } from 'jose';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { unknownScope } from './claims.js';

const OFFLINE_ACCESS = 'offline_access';

/**
 * The scope as the client sent it, before oidc-provider's checks: from the pushed request
 * (which this check already saw at POST /request), else from the form or the query.
 */
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

/**
 * The scope of an authorization request (README "Authorization Code + PKCE"), checked at /authorize,
 * POST /request and /device/auth after oidc-provider's own checks:
 * - a scope the server does not know is `invalid_scope` (RFC 6749 §4.1.2.1: at /authorize
 *   a redirect to the client with the error) instead of being silently dropped;
 * - `offline_access` asked for by a client allowed the refresh_token grant (and, when it
 *   was registered with a `scope`, allowed offline_access) stays in the
 *   request. oidc-provider drops it unless `prompt=consent` (OIDC Core §11) while this
 *   server issues refresh tokens to every such client (`issueRefreshToken`); the consent
 *   step then records it in the grant (a third-party client's consent page lists it), so
 *   the code, the token response's `scope` and what a refresh may ask for agree.
 * oidc-provider runs `extraParams` validators after its scope check; this is the one for
 * `scope`.
 */
export async function checkRequestedScope(
  ctx: KoaContextWithOIDC,
  value: unknown,
  client: { grantTypeAllowed(type: string): boolean; scope?: string } | undefined,
): Promise<void> {
  const scope = typeof value === 'string' ? value : '';
  const unknown = unknownScope(scope);
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
