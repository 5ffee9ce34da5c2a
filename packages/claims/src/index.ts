/**
 * @portcullis/claims — the one place that turns a credential into a verified Principal.
 *
 * Verification (verify.ts, RFC 9068 + RFC 8725): size (4096 chars) and base64url syntax
 * are checked before decoding; `alg` must be in the server-side allowlist (RS256/ES256
 * with a JWKS, HS256 only with a shared secret — never both, never `none`); `typ` must be
 * `at+jwt`; the key is chosen by `kid` alone (`jwk`/`jku`/`x5u`/`x5c` are ignored);
 * exact `iss`; `aud` contains the API audience; `exp`, `iat` required, `nbf` honoured,
 * 30 s tolerance; `exp - iat` at most 1 h; then the deny list. Each refusal is a
 * TokenError with a literal `code`. Verified tokens are cached by their full string
 * (bounded LRU); every hit rechecks `exp` and the deny list.
 *
 * DPoP (dpop.ts, RFC 9449; docs/dpop.md): a token carrying `cnf.jkt` is accepted only as
 * `Authorization: DPoP` with one valid proof signed by that key, checked on every request
 * even when the token itself comes from the cache; an unbound token only as Bearer.
 *
 * Subjects: a user token's `sub` is the user id; a client-credentials token's `sub` is
 * `client:<client_id>` (kind 'client'), so the two can never collide.
 *
 * Scope rule (a delegated token's scope narrows its role permissions, never widens):
 * - permissions = permissionsForRoles(roles) narrowed by scope, for user and client tokens;
 * - scope `api` keeps all role permissions;
 * - otherwise only scope values that are permission strings count (`orders:read`,
 *   `orders:*`, …), intersected wildcard-aware with the role permissions;
 * - `openid profile email offline_access` and unknown scopes grant no API permission,
 *   so a token with neither `api` nor a permission scope has no API permissions.
 *
 * Step-up (step-up.ts, RFC 9470): a token's `acr`, `amr` and `auth_time` become the
 * Principal's `acr`, `amr`, `authTime`; `stepUpShortfall` says whether a sign-in meets a
 * route's minimum `acr` and maximum age (README "Step-up"). ACR holds the class strings.
 *
 * Authorization: `authorize(principal, Perm.OrdersWrite, { ownerId: order.userId })` is
 * true when the permission is held and the principal owns the resource or holds
 * `orders:*`; `requirePermission` throws ForbiddenError (403) instead.
 *
 * Deny list (deny-list.ts): revoked tokens, grants and subjects in memory, `isDenied` per
 * request and `apply(entries)` to feed it; no timer, no I/O. The apps feed it from the
 * `revocations` table through createSharedDenyList of packages/db.
 *
 * Resource servers (resource-server.ts, challenge.ts; README.md of this package):
 * `createResourceServer` puts the above together for one issuer; `createAuthenticator`
 * is the framework-neutral core the Koa and Express adapters and the API go through;
 * challenge.ts writes every `WWW-Authenticate` (RFC 6750, RFC 9449, RFC 9470).
 */
export {
  CLIENT_SUBJECT_PREFIX,
  parseAccessTokenClaims,
  type AccessTokenClaims,
  type ClaimsParse,
} from './claims.js';
export {
  ForbiddenError,
  isTokenError,
  TokenError,
  type OAuthTokenError,
  type TokenErrorCode,
} from './errors.js';
export {
  createLocalKeySet,
  createRemoteKeySet,
  createSharedSecretKey,
  type AsymmetricAlgorithm,
  type KeySource,
  type RemoteKeySet,
  type RemoteKeySetOptions,
  type SigningAlgorithm,
} from './jwks.js';
export {
  API_SCOPE,
  hasPermission,
  isPermissionString,
  narrowPermissions,
  parseScope,
  Perm,
  permissionsForRoles,
  RESOURCES,
  ROLE_PERMISSIONS,
  ROLES,
  type Permission,
  type Resource,
  type Role,
} from './permissions.js';
export {
  authorize,
  principalFromClaims,
  requirePermission,
  type Principal,
  type ResourceAttributes,
} from './principal.js';
export {
  ACR,
  acrSatisfies,
  stepUpShortfall,
  type Acr,
  type StepUpRequirement,
  type StepUpShortfall,
} from './step-up.js';
export {
  API_KEY_PREFIX,
  chainResolvers,
  createJwtPrincipalResolver,
  resolveAuthorization,
  resolveBearer,
  type AuthorizationCredential,
  type CredentialInput,
  type JwtResolverOptions,
  type PrincipalResolver,
} from './bearer.js';
export {
  createDpopVerifier,
  DPOP_ALGORITHMS,
  htuOf,
  jwkThumbprint,
  type DpopAlgorithm,
  type DpopNonces,
  type DpopReplayStore,
  type DpopRequest,
  type DpopVerifier,
  type DpopVerifierOptions,
} from './dpop.js';
export { createDpopNonces, type DpopNoncesOptions } from './dpop-nonce.js';
export { createMemoryReplayStore, type MemoryReplayStoreOptions } from './dpop-replay.js';
export {
  createDenyList,
  predatesLogout,
  type DenyCheckInput,
  type DenyList,
  type DenyListOptions,
  type Revocation,
  type RevocationEntry,
} from './deny-list.js';
export { createTokenCache, type TokenCache } from './token-cache.js';
export {
  createAccessTokenVerifier,
  verifyAccessToken,
  type AccessTokenVerifier,
  type VerifyOptions,
} from './verify.js';
export {
  AuthenticationError,
  authenticationErrorOf,
  forbidden,
  fromTokenError,
  STEP_UP_DESCRIPTIONS,
  stepUpError,
  unauthenticated,
  unauthorizedHeaders,
  wwwAuthenticate,
  type AuthenticationErrorBody,
  type AuthenticationErrorCode,
  type AuthenticationReason,
  type Challenge,
  type ChallengeSettings,
  type UnauthorizedCode,
} from './challenge.js';
export { externalUrlOf } from './http.js';
export {
  authRequestOf,
  createAuthenticator,
  createResourceServer,
  type AuthRequest,
  type Authentication,
  type Authenticator,
  type AuthenticatorOptions,
  type DpopOptions,
  type ResourceServerOptions,
  type RouteRequirement,
} from './resource-server.js';
