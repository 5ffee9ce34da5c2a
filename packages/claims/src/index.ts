// @portcullis/claims: credential -> verified Principal. Overview: docs/architecture.md
// "Inside packages/claims"; usage, scope rule and options: this package's README.md.
export {
  CLIENT_SUBJECT_PREFIX,
  MAX_ACTOR_DEPTH,
  parseAccessTokenClaims,
  type AccessTokenClaims,
  type Actor,
  type ClaimsParse,
} from './claims.js';
export { isAuthorizationDetail, type AuthorizationDetail } from './authorization-details.js';
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
  permissionsForRoles,
  type RoleSource,
} from './permissions.js';
export {
  actorChain,
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
  permissionRefusal,
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
  PROTECTED_RESOURCE_METADATA_PATH,
  protectedResourceMetadata,
  resourceMetadataUrl,
  type ProtectedResourceMetadata,
  type ResourceDescription,
  type ResourceMetadataOptions,
} from './resource-metadata.js';
export {
  authRequestOf,
  createAuthenticator,
  createResourceServer,
  requirementScope,
  type AuthRequest,
  type Authentication,
  type Authenticator,
  type AuthenticatorOptions,
  type DpopOptions,
  type ResourceServerOptions,
  type RouteRequirement,
} from './resource-server.js';
