import type { AccessTokenClaims } from '@portcullis/claims';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { wrapAccessTokenFind } from './internals.js';
import { createApiTokenVerifier, type JwtIntrospectionOptions } from './introspection.js';
import { currentRequest } from '../data/request-memo.js';

interface AccessTokenModel {
  new (payload: Record<string, unknown>): Record<string, unknown>;
}

const isCompactJws = (value: unknown): value is string =>
  typeof value === 'string' && value.split('.').length === 3;

/** /me accepts the API's JWT access token (docs/architecture.md "Provider extensions"). */
export function acceptApiTokensAtUserinfo(
  provider: Provider,
  options: JwtIntrospectionOptions,
): void {
  const verifier = createApiTokenVerifier(options);
  const AccessToken = provider.AccessToken as unknown as AccessTokenModel;

  async function userinfoToken(jwt: string) {
    let claims: AccessTokenClaims;
    try {
      claims = await verifier.verify(jwt);
    } catch {
      return undefined; // foreign, forged, expired, another audience or revoked
    }
    if (!claims.grant_id) return undefined; // client credentials: no user
    const grant = await provider.Grant.find(claims.grant_id);
    if (!grant) return undefined;
    return new AccessToken({
      jti: claims.jti,
      iat: claims.iat,
      exp: claims.exp,
      accountId: claims.sub,
      clientId: claims.client_id,
      grantId: claims.grant_id,
      scope: grant.getOIDCScope(),
      ...(claims.cnf?.jkt ? { jkt: claims.cnf.jkt } : {}),
    });
  }

  wrapAccessTokenFind(provider, async function findAccessToken(value, findOptions, find) {
    const ctx = currentRequest() as Partial<KoaContextWithOIDC> | undefined;
    if (ctx?.oidc?.route !== 'userinfo' || !isCompactJws(value)) return find(value, findOptions);
    return userinfoToken(value);
  });
}
