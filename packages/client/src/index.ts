// Public API of @portcullis/client. See README.md for usage.
export { createPortcullisClient } from './client.js';
export type { PortcullisClient, PortcullisClientOptions } from './client.js';
export {
  ApiError,
  NetworkError,
  OAuthError,
  PortcullisError,
  StepUpRequiredError,
  TimeoutError,
  UnauthorizedError,
} from './errors.js';
export {
  parseChallenges,
  stepUpChallengeOf,
  stepUpParams,
  type StepUpChallenge,
} from './step-up.js';
export type { ApiErrorBody, PortcullisErrorCode, RequestInfo } from './errors.js';
export { createDpopKey, isUseDpopNonceChallenge, jwkThumbprint } from './dpop.js';
export type {
  CreateDpopKeyOptions,
  DpopKey,
  DpopKeyPair,
  DpopProofOptions,
  DpopPublicJwk,
} from './dpop.js';
export { createEtagCache } from './etag-cache.js';
export type { CachedResponse, EtagCache } from './etag-cache.js';
export type { HttpResponse, QueryParams, QueryValue, RawBody, RequestOptions } from './http.js';
export {
  base64url,
  buildAuthorizeUrl,
  clientCredentials,
  createPkcePair,
  createState,
  deviceAuthorization,
  ACCESS_TOKEN_TYPE,
  exchangeCode,
  exchangeToken,
  pollDeviceToken,
  portcullisEndpoints,
  pushAuthorizationRequest,
  refreshToken,
  s256,
} from './oauth.js';
export type {
  AuthorizationDetail,
  AuthorizeUrlParams,
  DeviceAuthorizationResponse,
  PkcePair,
  PollDeviceTokenOptions,
  PortcullisEndpoints,
  PushedAuthorizationRequest,
  TokenEndpointOptions,
  TokenResponse,
} from './oauth.js';
export type { ApiKeysApi } from './resources/api-keys.js';
export type { EventsApi } from './resources/events.js';
export type { OrdersApi, WriteOptions } from './resources/orders.js';
export type { CreatePaymentOptions, PaymentsApi } from './resources/payments.js';
export type { UploadsApi } from './resources/uploads.js';
export type { UsersApi } from './resources/users.js';
export { backoffDelay, parseRetryAfter } from './retry.js';
export type { RetryOptions, Sleep } from './retry.js';
export { createSseParser } from './sse.js';
export type { SseEvent, SseParser, StreamOptions } from './sse.js';
export type { AuthOptions } from './tokens.js';
export type * from './types.js';
// The declarations generated from the API's OpenAPI document, for anything types.ts does not name.
export type { components, operations, paths } from './generated/openapi.js';
