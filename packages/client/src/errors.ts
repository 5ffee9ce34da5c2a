/**
 * One error hierarchy for the client, in the style of jose's `util/errors.ts`: every
 * error carries a literal `code`, so callers branch on `err.code` (or `instanceof`)
 * instead of parsing messages.
 */
import type { StepUpChallenge } from './step-up.js';
import type { ErrorBody, ValidationErrorBody } from './types.js';

/** Machine-readable kind of a client error. */
export type PortcullisErrorCode =
  'timeout' | 'network' | 'api' | 'unauthorized' | 'step_up_required' | 'oauth' | 'sse';

/** Details of the failed request attached to every error the HTTP layer raises. */
export interface RequestInfo {
  method: string;
  url: string;
  /** Idempotency-Key that was sent; pass it again to retry the same logical operation later. */
  idempotencyKey?: string;
}

/** Base class of every error this package throws. */
export class PortcullisError extends Error {
  override name = 'PortcullisError';
  readonly code: PortcullisErrorCode;
  /** The request that failed, when the error comes from an HTTP call. */
  request?: RequestInfo;

  constructor(code: PortcullisErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The request did not complete within `timeoutMs`. */
export class TimeoutError extends PortcullisError {
  override name = 'TimeoutError';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super('timeout', `request timed out after ${timeoutMs} ms`, options);
    this.timeoutMs = timeoutMs;
  }
}

/** The server could not be reached or the connection broke (fetch rejected). */
export class NetworkError extends PortcullisError {
  override name = 'NetworkError';

  constructor(message: string, options?: { cause?: unknown }) {
    super('network', message, options);
  }
}

/**
 * Error body of the Portcullis API: the generated `Error` schema (`{error, message?}`)
 * plus the `fields` of a 422 `ValidationError` (messages per dotted path).
 */
export type ApiErrorBody = ErrorBody & { fields?: ValidationErrorBody['fields'] };

/** A non-2xx answer of the API. */
export class ApiError extends PortcullisError {
  override name = 'ApiError';
  readonly status: number;
  /** The body's `error` code, or `http_<status>` when the body had none. */
  readonly error: string;
  /** The body's `message`, when present. */
  readonly detail?: string;
  /** 422: messages per field, ready to map onto form inputs. */
  readonly fields?: Record<string, string[]>;
  /** The decoded body (JSON when it parsed, else text). */
  readonly body: unknown;
  readonly headers: Headers;
  /** 429: the server's Retry-After in milliseconds, when it sent one. */
  readonly retryAfterMs?: number;

  constructor(
    status: number,
    body: unknown,
    headers: Headers,
    extra?: { retryAfterMs?: number; code?: PortcullisErrorCode },
  ) {
    const parsed = asErrorBody(body);
    const error = parsed?.error ?? `http_${status}`;
    super(
      extra?.code ?? 'api',
      `${status} ${error}${parsed?.message ? `: ${parsed.message}` : ''}`,
    );
    this.status = status;
    this.error = error;
    this.detail = parsed?.message;
    this.fields = parsed?.fields;
    this.body = body;
    this.headers = headers;
    this.retryAfterMs = extra?.retryAfterMs;
  }
}

/**
 * 401 that survived a token refresh, or a refresh that failed (after which
 * `onSignOut` has been called). The user must authenticate again.
 */
export class UnauthorizedError extends ApiError {
  override name = 'UnauthorizedError';

  constructor(body: unknown, headers: Headers, options?: { cause?: unknown }) {
    super(401, body, headers, { code: 'unauthorized' });
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * 401 `insufficient_user_authentication` (RFC 9470): the token is fine but its sign-in is
 * too weak or too old for this operation. Not refreshed (a refreshed token keeps its
 * sign-in) and nobody is signed out: sign the user in again with `acrValues` and `maxAge`
 * in the authorization request, then retry (README "Step-up").
 */
export class StepUpRequiredError extends ApiError {
  override name = 'StepUpRequiredError';
  /** The `acr_values` to request, e.g. `['urn:portcullis:acr:mfa']`. */
  readonly acrValues: string[];
  /** The `max_age` to request, seconds, when the route bounds the sign-in's age. */
  readonly maxAge?: number;

  constructor(body: unknown, headers: Headers, challenge: StepUpChallenge) {
    super(401, body, headers, { code: 'step_up_required' });
    this.acrValues = challenge.acrValues;
    if (challenge.maxAge !== undefined) this.maxAge = challenge.maxAge;
  }
}

/** An OAuth endpoint answered with `{error, error_description}` (RFC 6749 §5.2). */
export class OAuthError extends PortcullisError {
  override name = 'OAuthError';
  readonly status: number;
  /** RFC 6749 / RFC 8628 error code, e.g. `invalid_grant`, `expired_token`. */
  readonly error: string;
  readonly errorDescription?: string;
  /** The server's `DPoP-Nonce` (with `use_dpop_nonce`: the nonce the next proof must carry). */
  readonly dpopNonce?: string;

  constructor(
    status: number,
    error: string,
    errorDescription?: string,
    extra: { dpopNonce?: string } = {},
  ) {
    super('oauth', errorDescription ? `${error}: ${errorDescription}` : error);
    this.status = status;
    this.error = error;
    this.errorDescription = errorDescription;
    if (extra.dpopNonce !== undefined) this.dpopNonce = extra.dpopNonce;
  }
}

function asErrorBody(body: unknown): ApiErrorBody | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  if (typeof record.error !== 'string') return undefined;
  return {
    error: record.error,
    message: typeof record.message === 'string' ? record.message : undefined,
    fields: isFields(record.fields) ? record.fields : undefined,
  };
}

function isFields(value: unknown): value is Record<string, string[]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (v) => Array.isArray(v) && v.every((m) => typeof m === 'string'),
  );
}
