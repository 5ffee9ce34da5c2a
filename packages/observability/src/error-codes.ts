// The REST and admin API error codes, once; docs/api-contracts.md "Error codes" (a test holds them equal).
export type ErrorService = 'api' | 'admin';

export interface ErrorCodeInfo {
  status: number;
  /** A second status the code also comes with, where a standard says so. */
  alsoStatus?: number;
  services: readonly ErrorService[];
}

const both = ['api', 'admin'] as const;
const api = ['api'] as const;

export const ERROR_CODES = {
  invalid_request: { status: 400, alsoStatus: 401, services: both },
  malformed_json: { status: 400, services: both },
  malformed_multipart: { status: 400, services: api },
  invalid_cursor: { status: 400, services: api },
  ambiguous_credentials: { status: 400, services: api },
  invalid_client_metadata: { status: 400, services: ['admin'] },
  idempotency_key_required: { status: 400, services: api },
  idempotency_key_invalid: { status: 400, services: api },
  unauthenticated: { status: 401, services: both },
  invalid_token: { status: 401, services: both },
  invalid_dpop_proof: { status: 401, services: api },
  use_dpop_nonce: { status: 401, services: api },
  insufficient_user_authentication: { status: 401, services: api },
  invalid_credentials: { status: 401, services: api },
  second_factor_required: { status: 401, services: api },
  forbidden: { status: 403, services: both },
  forbidden_origin: { status: 403, services: api },
  email_unverified: { status: 403, services: api },
  insufficient_authorization_details: { status: 403, services: api },
  not_found: { status: 404, services: both },
  method_not_allowed: { status: 405, services: both },
  conflict: { status: 409, services: both },
  version_conflict: { status: 409, services: api },
  invalid_transition: { status: 409, services: api },
  order_closed: { status: 409, services: api },
  idempotency_key_in_flight: { status: 409, services: api },
  precondition_failed: { status: 412, services: api },
  payload_too_large: { status: 413, services: both },
  too_many_parts: { status: 413, services: api },
  unsupported_media_type: { status: 415, services: both },
  validation_failed: { status: 422, services: both },
  idempotency_key_reused: { status: 422, services: api },
  rate_limited: { status: 429, services: api },
  internal_error: { status: 500, services: both },
  temporarily_unavailable: { status: 503, services: api },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export type ErrorCodeOf<S extends ErrorService> = {
  [C in ErrorCode]: S extends (typeof ERROR_CODES)[C]['services'][number] ? C : never;
}[ErrorCode];

/** Per field, what is wrong with it (422 `validation_failed`). */
export type FieldErrors = Record<string, string[]>;

/** An error response body of the API and the admin API. */
export interface ErrorBody<C extends string = ErrorCode> {
  error: C;
  message?: string;
  fields?: FieldErrors;
}
