/** The API's one error hierarchy, rendered only by render-errors.ts (docs/api-contracts.md#errors). */
import {
  ACR,
  AuthenticationError,
  unauthorizedHeaders,
  wwwAuthenticate,
  type AuthenticationErrorCode,
  type ChallengeSettings,
  type UnauthorizedCode,
} from '@portcullis/claims';
import type {
  ErrorBody as SharedErrorBody,
  ErrorCodeOf,
  FieldErrors,
} from '@portcullis/observability';

export type ErrorCode = ErrorCodeOf<'api'>;

export type ErrorBody = SharedErrorBody<ErrorCode> & {
  /** Step-up (RFC 9470, a RefusalError): what a new sign-in must meet. */
  acr_values?: string;
  max_age?: number;
};
export type { FieldErrors };

export class AppError<C extends ErrorCode = ErrorCode> extends Error {
  override name = 'AppError';
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly status: number,
    readonly code: C,
    message?: string,
    options: { expose?: boolean; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message ?? code, { cause: options.cause });
    this.expose = options.expose ?? status < 500;
    this.headers = options.headers ?? {};
  }

  readonly expose: boolean;

  /** The headers sent: those given, or a challenge built with the app's settings. */
  headersWith(_challenge: ChallengeSettings): Readonly<Record<string, string>> {
    return this.headers;
  }

  body(): ErrorBody {
    return this.expose && this.message !== this.code
      ? { error: this.code, message: this.message }
      : { error: this.code };
  }
}

export class BadRequestError extends AppError<
  'invalid_request' | 'malformed_json' | 'invalid_cursor'
> {
  override name = 'BadRequestError';
  constructor(
    code: 'invalid_request' | 'malformed_json' | 'invalid_cursor' = 'invalid_request',
    message?: string,
  ) {
    super(400, code, message);
  }
}

/** A refusal built by @portcullis/claims (RFC 6750 §3, 9449 §7.1, 9470 §3), sent as it is. */
export class RefusalError extends AppError<AuthenticationErrorCode> {
  override name = 'RefusalError';
  constructor(readonly refusal: AuthenticationError) {
    super(refusal.status, refusal.code, refusal.message, {
      headers: { ...refusal.headers },
      cause: refusal.cause ?? refusal,
    });
  }
  override body(): ErrorBody {
    return this.refusal.body();
  }
}

/** 401 from the API's own code: a bare RFC 6750 §3 challenge, or `error` and a fixed description. */
export class UnauthorizedError extends RefusalError {
  override name = 'UnauthorizedError';
  constructor(
    readonly unauthorizedCode: UnauthorizedCode = 'unauthenticated',
    readonly options: { scheme?: 'Bearer' | 'DPoP'; description?: string } = {},
  ) {
    super(
      new AuthenticationError(401, unauthorizedCode, {
        description: options.description,
        reason: 'credential_missing',
        headers: unauthorizedHeaders({}, unauthorizedCode, options),
      }),
    );
  }
  override headersWith(challenge: ChallengeSettings): Readonly<Record<string, string>> {
    return unauthorizedHeaders(challenge, this.unauthorizedCode, this.options);
  }
}

export class ForbiddenError extends AppError<'forbidden'> {
  override name = 'ForbiddenError';
  constructor(readonly reason = 'forbidden') {
    super(403, 'forbidden');
  }
  override body(): ErrorBody {
    return { error: 'forbidden' };
  }
}

export class NotFoundError extends AppError<'not_found'> {
  override name = 'NotFoundError';
  constructor(message?: string) {
    super(404, 'not_found', message);
  }
}

export class ConflictError extends AppError<
  'conflict' | 'version_conflict' | 'invalid_transition' | 'order_closed'
> {
  override name = 'ConflictError';
  constructor(
    code: 'conflict' | 'version_conflict' | 'invalid_transition' | 'order_closed' = 'conflict',
    message?: string,
  ) {
    super(409, code, message);
  }
}

export class PreconditionFailedError extends AppError<'precondition_failed'> {
  override name = 'PreconditionFailedError';
  constructor(message = 'If-Match does not match the current representation') {
    super(412, 'precondition_failed', message);
  }
}

export class PayloadTooLargeError extends AppError<'payload_too_large'> {
  override name = 'PayloadTooLargeError';
  constructor() {
    super(413, 'payload_too_large');
  }
}

export class MalformedMultipartError extends AppError<'malformed_multipart'> {
  override name = 'MalformedMultipartError';
  constructor(message: string) {
    super(400, 'malformed_multipart', message);
  }
}

export class TooManyPartsError extends AppError<'too_many_parts'> {
  override name = 'TooManyPartsError';
  constructor(message: string) {
    super(413, 'too_many_parts', message);
  }
}

export class UnsupportedMediaTypeError extends AppError<'unsupported_media_type'> {
  override name = 'UnsupportedMediaTypeError';
  constructor(message = 'request bodies must be application/json') {
    super(415, 'unsupported_media_type', message);
  }
}

export class ValidationError extends AppError<'validation_failed'> {
  override name = 'ValidationError';
  constructor(
    readonly fields: FieldErrors,
    message = 'the request is invalid',
  ) {
    super(422, 'validation_failed', message);
  }
  override body(): ErrorBody {
    return { error: 'validation_failed', message: this.message, fields: this.fields };
  }
}

export class RateLimitedError extends AppError<'rate_limited'> {
  override name = 'RateLimitedError';
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', 'too many requests', {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    });
  }
}

/** CSRF defence besides SameSite=Strict: a cookie-authenticated write from an origin not ours. */
export class ForbiddenOriginError extends AppError<'forbidden_origin'> {
  override name = 'ForbiddenOriginError';
  constructor() {
    super(403, 'forbidden_origin');
  }
}

/** Both an Authorization header and a `sid` cookie: which caller is meant is not guessed. */
export class AmbiguousCredentialsError extends AppError<'ambiguous_credentials'> {
  override name = 'AmbiguousCredentialsError';
  constructor() {
    super(
      400,
      'ambiguous_credentials',
      'send either an Authorization header or the sid cookie, not both',
    );
  }
}

/** A dependency that authentication needs (the rate-limit store) is down: fail closed. */
export class ServiceUnavailableError extends AppError<'temporarily_unavailable'> {
  override name = 'ServiceUnavailableError';
  constructor(message: string, retryAfterSeconds = 5, cause?: unknown) {
    super(503, 'temporarily_unavailable', message, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
      cause,
    });
  }
}

/** POST /login with a wrong email or password; which of the two is never said. */
export class InvalidCredentialsError extends AppError<'invalid_credentials'> {
  override name = 'InvalidCredentialsError';
  constructor() {
    super(401, 'invalid_credentials', 'the email or password is wrong');
  }
  override headersWith(challenge: ChallengeSettings): Readonly<Record<string, string>> {
    return { 'WWW-Authenticate': wwwAuthenticate({ ...challenge, dpopAlgorithms: false }) };
  }
}

/** The right password of a sign-up whose address is not proven yet (docs/security.md#doors). */
export class EmailUnverifiedError extends AppError<'email_unverified'> {
  override name = 'EmailUnverifiedError';
  constructor() {
    super(
      403,
      'email_unverified',
      'verify your e-mail address first: open the link mailed to you, or ask the sign-in page for a new one',
    );
  }
}

/** A password alone opens no session for an account with a second factor (docs/security.md#doors). */
export class SecondFactorRequiredError extends AppError<'second_factor_required'> {
  override name = 'SecondFactorRequiredError';
  constructor() {
    super(
      401,
      'second_factor_required',
      'this account signs in with a second factor: sign in at the auth server (authorization code with PKCE), not with a password here',
    );
  }
  override headersWith(challenge: ChallengeSettings): Readonly<Record<string, string>> {
    return {
      'WWW-Authenticate': wwwAuthenticate(
        { ...challenge, dpopAlgorithms: false },
        {
          error: 'insufficient_user_authentication',
          description: 'a second factor is required',
          acrValues: ACR.mfa,
        },
      ),
    };
  }
}

/** Idempotency-Key problems of POST /payments (docs/api-contracts.md). */
export type IdempotencyErrorCode =
  | 'idempotency_key_required'
  | 'idempotency_key_invalid'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_flight';

const IDEMPOTENCY_ERRORS: Record<IdempotencyErrorCode, [number, string]> = {
  idempotency_key_required: [
    400,
    'send an Idempotency-Key header (1 to 255 printable ASCII characters)',
  ],
  idempotency_key_invalid: [400, 'the Idempotency-Key must be 1 to 255 printable ASCII characters'],
  idempotency_key_reused: [422, 'this Idempotency-Key was used with another request body'],
  idempotency_key_in_flight: [
    409,
    'a request with this Idempotency-Key is still being processed; retry later',
  ],
};

export class IdempotencyError extends AppError<IdempotencyErrorCode> {
  override name = 'IdempotencyError';
  constructor(code: IdempotencyErrorCode) {
    const [status, message] = IDEMPOTENCY_ERRORS[code];
    super(
      status,
      code,
      message,
      code === 'idempotency_key_in_flight' ? { headers: { 'Retry-After': '1' } } : {},
    );
  }
}

/** RFC 9396: the token's payment details do not allow this payment, or it was made already. */
export class InsufficientAuthorizationDetailsError extends AppError<'insufficient_authorization_details'> {
  override name = 'InsufficientAuthorizationDetailsError';
  constructor(message: string) {
    super(403, 'insufficient_authorization_details', message);
  }
  override headersWith(challenge: ChallengeSettings): Readonly<Record<string, string>> {
    return {
      'WWW-Authenticate': wwwAuthenticate(challenge, {
        error: 'insufficient_authorization_details',
        description: this.message,
      }),
    };
  }
}
