import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { DEVICE_GRANT } from '../kernel/grant-types.js';
import { issuedScopeOf } from './claims.js';
import { OIDC_SCOPES } from '../kernel/scopes.js';

interface Scoped {
  scope?: string;
}

interface TokenEntities {
  AccessToken?: Scoped & { resourceServer?: unknown };
  ClientCredentials?: Scoped & { resourceServer?: unknown };
  AuthorizationCode?: Scoped;
  DeviceCode?: Scoped;
  RefreshToken?: Scoped;
  Grant?: { getOIDCScopeFiltered(scopes: Set<string>): string };
}

/** The scope a user grant's token request covers: the refresh's, else the code's or token's. */
function coveredScope(
  params: { grant_type?: string; scope?: string } | undefined,
  entities: TokenEntities,
): string | undefined {
  switch (params?.grant_type) {
    case 'authorization_code':
      return entities.AuthorizationCode?.scope;
    case DEVICE_GRANT:
      return entities.DeviceCode?.scope;
    case 'refresh_token':
      return params.scope || entities.RefreshToken?.scope;
    default:
      return undefined;
  }
}

/**
 * RFC 6749 §5.1: the token response's `scope` is the access token's, `api` spelled out as in
 * the token (claims.ts), and also names the grant's OIDC scopes.
 */
export const reportGrantedScope: Middleware = async function reportGrantedScope(ctx, next) {
  await next();
  const { oidc } = ctx as unknown as Partial<KoaContextWithOIDC>;
  const body = ctx.body as { access_token?: unknown; scope?: string } | undefined;
  if (oidc?.route !== 'token' || ctx.status !== 200 || typeof body?.access_token !== 'string')
    return;
  const entities = oidc.entities as TokenEntities;
  const at = entities.AccessToken ?? entities.ClientCredentials;
  if (!at?.resourceServer) return;
  const issued = issuedScopeOf(at) ?? at.scope ?? '';
  const covered = coveredScope(oidc.params as Parameters<typeof coveredScope>[0], entities);
  if (covered === undefined || !entities.Grant) {
    if (issued) body.scope = issued;
    return;
  }
  // Permissions are the provider's scopes too (resource-registry.ts): only the OIDC ones here.
  const oidcScope = entities.Grant.getOIDCScopeFiltered(new Set(covered.split(' ')))
    .split(' ')
    .filter((s) => OIDC_SCOPES.includes(s));
  const scope = new Set([...oidcScope, ...issued.split(' ')]);
  scope.delete('');
  body.scope = [...scope].join(' ');
};
