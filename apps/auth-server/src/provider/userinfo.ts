import type { AccessTokenClaims } from '@portcullis/claims';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { createApiTokenVerifier, type JwtIntrospectionOptions } from './introspection.js';
import { currentRequest } from './request-memo.js';

interface AccessTokenModel {
  find(value: string, options?: object): Promise<unknown>;
  new (payload: Record<string, unknown>): Record<string, unknown>;
}

const isCompactJws = (value: unknown): value is string =>
  typeof value === 'string' && value.split('.').length === 3;

/**
 * /me accepts the access token of the code flow (README "Userinfo"): the API's JWT, which
 * oidc-provider does not look up (it is not stored) and refuses for its audience. While
 * oidc-provider handles a userinfo request, finding an access token that is a JWT means:
 * verify it as the API would (packages/claims, against this server's key ring and the
 * deny list), load its grant, and hand oidc-provider a token of that grant's OIDC scope,
 * for no audience. oidc-provider then does the rest as for its own tokens: `openid`
 * required (insufficient_scope), the DPoP proof checked against `cnf.jkt` (a bound token
 * without its proof, or a proof with another key, is invalid_token), the grant, client and
 * account loaded, and only the claims of the granted scopes returned. A token refused here
 * is "not found": 401 invalid_token. Opaque tokens are looked up as before.
 */
export function acceptApiTokensAtUserinfo(
  provider: Provider,
  options: JwtIntrospectionOptions,
): void {
  const verifier = createApiTokenVerifier(options);
  const AccessToken = provider.AccessToken as unknown as AccessTokenModel;
  const find = AccessToken.find.bind(AccessToken);

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

  AccessToken.find = async function findAccessToken(value, findOptions) {
    const ctx = currentRequest() as Partial<KoaContextWithOIDC> | undefined;
    if (ctx?.oidc?.route !== 'userinfo' || !isCompactJws(value)) return find(value, findOptions);
    return userinfoToken(value);
  };
}
