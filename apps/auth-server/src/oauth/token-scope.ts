import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { DEVICE_GRANT } from '../kernel/grant-types.js';

interface Scoped {
  scope?: string;
}

interface TokenEntities {
  AccessToken?: Scoped & { resourceServer?: unknown };
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

/** RFC 6749 §5.1: the token response's `scope` also names the grant's OIDC scopes. */
export const reportGrantedScope: Middleware = async function reportGrantedScope(ctx, next) {
  await next();
  const { oidc } = ctx as unknown as Partial<KoaContextWithOIDC>;
  const body = ctx.body as { access_token?: unknown; scope?: string } | undefined;
  if (oidc?.route !== 'token' || ctx.status !== 200 || typeof body?.access_token !== 'string')
    return;
  const entities = oidc.entities as TokenEntities;
  const at = entities.AccessToken;
  if (!at?.resourceServer || !entities.Grant) return;
  const covered = coveredScope(oidc.params as Parameters<typeof coveredScope>[0], entities);
  if (covered === undefined) return;
  const oidcScope = entities.Grant.getOIDCScopeFiltered(new Set(covered.split(' ')));
  const scope = new Set([...oidcScope.split(' '), ...(at.scope ?? '').split(' ')]);
  scope.delete('');
  body.scope = [...scope].join(' ');
};
