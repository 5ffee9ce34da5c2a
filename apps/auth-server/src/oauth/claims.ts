import type { AccountsRepo } from '@portcullis/accounts';
import { API_SCOPE, CLIENT_SUBJECT_PREFIX } from '@portcullis/claims';
import { errors, type Client, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import { grantIssuedAt } from '../data/oidc-adapter.js';
import { FAPI_ALGS, isFapiClient } from './fapi.js';
import { accessTokenSigner, type KeyRing } from './keys.js';
import type { RegisteredResource, ResourceRegistry } from './resource-registry.js';
import { exchangedClaimsOf } from './token-exchange.js';

interface TokenLike {
  kind: string;
  clientId?: string | undefined;
  accountId?: string | undefined;
  grantId?: string | undefined;
  scope?: string | undefined;
}

export interface ResourceServerDeps {
  registry: ResourceRegistry;
  accounts: Pick<AccountsRepo, 'findById'>;
  accessTokenTtl: number;
  keys: KeyRing;
}

/** The user a request acts for: the code's, device code's or refresh token's, else the session's. */
function accountOf(ctx: KoaContextWithOIDC): string | undefined {
  const entities = ctx.oidc.entities as Record<string, { accountId?: string } | undefined>;
  return (
    entities['AuthorizationCode']?.accountId ??
    entities['DeviceCode']?.accountId ??
    entities['RefreshToken']?.accountId ??
    ctx.oidc.session?.accountId
  );
}

/** The roles behind a token: a client-credentials client's own, else its user's; none unknown. */
export async function subjectRoles(
  ctx: KoaContextWithOIDC,
  accounts: Pick<AccountsRepo, 'findById'>,
  accountId = accountOf(ctx),
): Promise<readonly string[] | undefined> {
  if (
    (ctx.oidc.params as { grant_type?: unknown } | undefined)?.grant_type === 'client_credentials'
  ) {
    const roles = (ctx.oidc.client as { roles?: unknown } | undefined)?.roles;
    return Array.isArray(roles) ? (roles as string[]) : [];
  }
  if (!accountId) return undefined;
  return (await accounts.findById(accountId))?.roles ?? [];
}

/**
 * A registered API's token settings; its scope is what the subject's roles grant there, so a
 * client asking for more gets less (docs/roles.md "Tokens"). Before sign-in: all it offers.
 */
export async function resourceServerOf(
  ctx: KoaContextWithOIDC,
  resource: RegisteredResource,
  deps: ResourceServerDeps,
  roles: readonly string[] | undefined,
): Promise<ResourceServer> {
  const scope = roles
    ? deps.registry.grantable(resource, roles)
    : deps.registry.grantable(resource, []).concat([...resource.permissions.keys()]);
  return {
    scope: [...new Set(scope)].join(' '),
    audience: resource.identifier,
    accessTokenFormat: 'jwt',
    accessTokenTTL: resource.accessTokenTtl ?? deps.accessTokenTtl,
    jwt: { sign: accessTokenKey(deps.keys, ctx.oidc.client, resource.signingAlg) },
  };
}

export function resourceServerInfo(
  deps: ResourceServerDeps,
): (ctx: KoaContextWithOIDC, resource: string) => Promise<ResourceServer> {
  return async function getResourceServerInfo(ctx, identifier) {
    const resource = deps.registry.find(identifier);
    if (!resource) throw new errors.InvalidTarget('the resource is not a registered API');
    if (resource.dpopRequired && ctx.oidc.route === 'token' && !ctx.get('dpop')) {
      throw new errors.InvalidRequest(
        'this API takes only DPoP-bound tokens: send a DPoP proof (RFC 9449)',
      );
    }
    applyRegisteredScope(ctx);
    return resourceServerOf(ctx, resource, deps, await subjectRoles(ctx, deps.accounts));
  };
}

/**
 * The newest key signs access tokens; a FAPI 2.0 client's, the newest ES256 or PS256 key; an API
 * registered with an algorithm, the newest key of it (both: the API's, if FAPI allows it).
 */
export function accessTokenKey(
  keys: KeyRing,
  client: Client | undefined,
  resourceAlg?: string | null,
) {
  const fapi = isFapiClient(client);
  const algs = resourceAlg
    ? fapi && !FAPI_ALGS.includes(resourceAlg as never)
      ? []
      : [resourceAlg]
    : fapi
      ? FAPI_ALGS
      : undefined;
  const signer = accessTokenSigner(keys, algs);
  if (!signer) {
    throw new errors.UnauthorizedClient(
      resourceAlg
        ? `no active ${resourceAlg} signing key for this API's tokens${fapi ? ' that FAPI 2.0 allows' : ''}`
        : `FAPI 2.0: no ${FAPI_ALGS.join(' or ')} signing key is active for this client's tokens`,
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
export function createExtraTokenClaims(accounts: AccountsRepo, registry: ResourceRegistry) {
  return async function extraTokenClaims(ctx: KoaContextWithOIDC, token: TokenLike) {
    const exchanged = exchangedClaimsOf(token);
    if (token.kind === 'ClientCredentials') {
      refuseUnknownScopes(ctx, registry);
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
export function unknownScope(scope: string, registry: ResourceRegistry): string | undefined {
  const known = registry.scopes;
  return scope.split(' ').find((s) => s !== '' && !known.has(s));
}

/** RFC 6749 §5.2: an unknown client-credentials scope is invalid_scope, not an empty token. */
function refuseUnknownScopes(ctx: KoaContextWithOIDC, registry: ResourceRegistry) {
  const requested = (ctx.oidc.params as { scope?: unknown } | undefined)?.scope;
  if (typeof requested !== 'string') return;
  const unknown = unknownScope(requested, registry);
  if (unknown !== undefined)
    throw new errors.InvalidScope('requested scope is not supported', unknown);
}

const spelledOut = new WeakMap<object, string>();

/** The scope an access token was issued with, `api` spelled out (the token response says it). */
export function issuedScopeOf(token: object): string | undefined {
  return spelledOut.get(token);
}

/**
 * Client-credentials `sub` is `client:<client_id>`, never a user id (packages/claims needs it);
 * `api` in a token's scope is spelled out into the permissions it stands for there, so a
 * service with no role table reads them from the token (docs/roles.md "Tokens").
 */
export function createCustomizeJwt(deps: Pick<ResourceServerDeps, 'registry' | 'accounts'>) {
  return async function customizeJwt(
    ctx: KoaContextWithOIDC,
    token: TokenLike & { resourceServer?: { audience?: unknown } },
    jwt: { header?: unknown; payload: Record<string, unknown> },
  ): Promise<void> {
    if (token.kind === 'ClientCredentials') {
      jwt.payload['sub'] = `${CLIENT_SUBJECT_PREFIX}${String(jwt.payload['client_id'])}`;
    }
    const scope = jwt.payload['scope'];
    const audience = token.resourceServer?.audience;
    if (typeof scope !== 'string' || typeof audience !== 'string') return;
    const resource = deps.registry.find(audience);
    if (!resource || !scope.split(' ').includes(API_SCOPE)) return;
    const roles =
      (await subjectRoles(ctx, deps.accounts, token.accountId)) ?? ([] as readonly string[]);
    jwt.payload['scope'] = deps.registry.spellOut(scope, resource, roles);
    spelledOut.set(token, jwt.payload['scope'] as string);
  };
}
