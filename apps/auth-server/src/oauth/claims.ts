import type { AccountsRepo } from '@portcullis/accounts';
import { API_SCOPES, CLIENT_SUBJECT_PREFIX } from '@portcullis/claims';
import { errors, type Client, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import { grantIssuedAt } from '../data/oidc-adapter.js';
import { FAPI_ALGS, isFapiClient } from './fapi.js';
import { accessTokenSigner, type KeyRing } from './keys.js';
import { exchangedClaimsOf } from './token-exchange.js';
import { OIDC_SCOPES } from '../kernel/scopes.js';

/** Scopes of the API resource server: `api` (all permissions of my roles) and each permission. */
export { API_SCOPES };

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
  return async function getResourceServerInfo(ctx, resource) {
    if (resource !== apiAudience) throw new errors.InvalidTarget();
    applyRegisteredScope(ctx);
    return {
      scope,
      audience: apiAudience,
      accessTokenFormat: 'jwt',
      accessTokenTTL: accessTokenTtl,
      jwt: { sign: accessTokenKey(keys, ctx.oidc.client) },
    };
  };
}

/** The newest key signs access tokens; a FAPI 2.0 client's, the newest ES256 or PS256 key. */
export function accessTokenKey(keys: KeyRing, client: Client | undefined) {
  const signer = accessTokenSigner(keys, isFapiClient(client) ? FAPI_ALGS : undefined);
  if (!signer) {
    throw new errors.UnauthorizedClient(
      `FAPI 2.0: no ${FAPI_ALGS.join(' or ')} signing key is active for this client's tokens`,
    );
  }
  return { alg: signer.alg, kid: signer.kid };
}

/** Client credentials without `scope`: the client's registered one (else the token holds none). */
function applyRegisteredScope(ctx: KoaContextWithOIDC) {
  const params = ctx.oidc.params as { grant_type?: unknown; scope?: unknown } | undefined;
  const registered = (ctx.oidc.client as { scope?: string } | undefined)?.scope;
  if (params?.grant_type !== 'client_credentials' || params.scope !== undefined) return;
  if (registered) params.scope = registered;
}

/** Beyond RFC 9068: `roles`, `grant_id` (deny list), `grant_iat` (logout, in ms), `email`. */
export function createExtraTokenClaims(accounts: AccountsRepo) {
  return async function extraTokenClaims(ctx: KoaContextWithOIDC, token: TokenLike) {
    const exchanged = exchangedClaimsOf(token);
    if (token.kind === 'ClientCredentials') {
      refuseUnknownScopes(ctx);
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
    // An exchanged token keeps the subject token's sign-in and names its actors (RFC 8693 §4.1).
    Object.assign(claims, exchanged ?? signInClaims(ctx));
    const grant = ctx.oidc.entities.Grant;
    const oidcScope = grant?.getOIDCScope().split(' ') ?? [];
    if (user && oidcScope.includes('email')) claims['email'] = user.email;
    return claims;
  };
}

/** The sign-in behind an access token (RFC 9068 §2.2.1), for the API's step-up. */
function signInClaims(ctx: KoaContextWithOIDC): Record<string, unknown> {
  const { AuthorizationCode, RefreshToken, DeviceCode } = ctx.oidc.entities as Record<
    string,
    { acr?: string; amr?: string[]; authTime?: number } | undefined
  >;
  const source = AuthorizationCode ?? RefreshToken ?? DeviceCode;
  if (!source) return {};
  return {
    ...(source.acr ? { acr: source.acr } : {}),
    ...(source.amr ? { amr: source.amr } : {}),
    ...(source.authTime ? { auth_time: source.authTime } : {}),
  };
}

/** The first scope the server does not know, if any. */
export function unknownScope(scope: string): string | undefined {
  return scope.split(' ').find((s) => s !== '' && !isApiScope(s) && !OIDC_SCOPES.includes(s));
}

/** RFC 6749 §5.2: an unknown client-credentials scope is invalid_scope, not an empty token. */
function refuseUnknownScopes(ctx: KoaContextWithOIDC) {
  const requested = (ctx.oidc.params as { scope?: unknown } | undefined)?.scope;
  if (typeof requested !== 'string') return;
  const unknown = unknownScope(requested);
  if (unknown !== undefined)
    throw new errors.InvalidScope('requested scope is not supported', unknown);
}

/** Client-credentials `sub` is `client:<client_id>`, never a user id (packages/claims needs it). */
export async function customizeJwt(
  _ctx: KoaContextWithOIDC,
  token: TokenLike,
  jwt: { header?: unknown; payload: Record<string, unknown> },
): Promise<void> {
  if (token.kind === 'ClientCredentials') {
    jwt.payload['sub'] = `${CLIENT_SUBJECT_PREFIX}${String(jwt.payload['client_id'])}`;
  }
}
