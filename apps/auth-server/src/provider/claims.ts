import type { AccountsRepo } from '@portcullis/accounts';
import { API_SCOPE, CLIENT_SUBJECT_PREFIX, Perm } from '@portcullis/claims';
import { errors, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import { grantIssuedAt } from '../data/oidc-adapter.js';
import type { KeyRing } from './keys.js';

/** Scopes of the API resource server: `api` (all permissions of my roles) and each permission. */
export const API_SCOPES: readonly string[] = [API_SCOPE, ...new Set(Object.values(Perm))];

export const isApiScope = (scope: string) => API_SCOPES.includes(scope);

interface TokenLike {
  kind: string;
  clientId?: string | undefined;
  accountId?: string | undefined;
  grantId?: string | undefined;
  scope?: string | undefined;
}

export function resourceServerInfo(
  apiAudience: string,
  accessTokenTtl: number,
  keys: KeyRing,
): (ctx: KoaContextWithOIDC, resource: string) => Promise<ResourceServer> {
  const scope = API_SCOPES.join(' ');
  return async function getResourceServerInfo(_ctx, resource) {
    if (resource !== apiAudience) throw new errors.InvalidTarget();
    return {
      scope,
      audience: apiAudience,
      accessTokenFormat: 'jwt',
      accessTokenTTL: accessTokenTtl,
      jwt: { sign: { alg: keys.current.alg, kid: keys.current.kid } },
    };
  };
}

/**
 * Claims beyond RFC 9068's: `roles` (the user's, or the client's `roles` metadata for
 * client credentials), `grant_id` (so the API deny list can revoke a whole grant),
 * `grant_iat` (when the grant was created, Unix seconds with milliseconds: logout
 * everywhere cuts off by it, `iat` having whole seconds only) and `email` when the grant
 * includes the email scope.
 */
export function createExtraTokenClaims(accounts: AccountsRepo) {
  return async function extraTokenClaims(ctx: KoaContextWithOIDC, token: TokenLike) {
    if (token.kind === 'ClientCredentials') {
      // Extra metadata sits on the Client as a property (metadata() would copy them all).
      const roles = (ctx.oidc.client as { roles?: unknown } | undefined)?.roles;
      return { roles: Array.isArray(roles) ? roles : [] };
    }
    if (!token.accountId) return undefined;
    const user = await accounts.findById(token.accountId);
    const claims: Record<string, unknown> = { roles: user?.roles ?? [] };
    if (token.grantId) {
      claims['grant_id'] = token.grantId;
      const grantIat = await grantIssuedAt(token.grantId);
      if (grantIat !== undefined) claims['grant_iat'] = grantIat;
    }
    const grant = ctx.oidc.entities.Grant;
    const oidcScope = grant?.getOIDCScope().split(' ') ?? [];
    if (user && oidcScope.includes('email')) claims['email'] = user.email;
    return claims;
  };
}

/**
 * oidc-provider sets `sub` to the client id for client-credentials tokens and
 * extraTokenClaims cannot override registered claims, so the JWT customizer prefixes
 * it: `client:<client_id>` can never equal a user id (packages/claims relies on it).
 */
export async function customizeJwt(
  _ctx: KoaContextWithOIDC,
  token: TokenLike,
  jwt: { header?: unknown; payload: Record<string, unknown> },
): Promise<void> {
  if (token.kind === 'ClientCredentials') {
    jwt.payload['sub'] = `${CLIENT_SUBJECT_PREFIX}${String(jwt.payload['client_id'])}`;
  }
}
