// Every error carries a literal `code` (as jose's do), so callers branch on it, not on messages.
import type { StepUpChallenge } from './step-up.js';
import type { ErrorBody, ValidationErrorBody } from './types.js';

export type PortcullisErrorCode =
  'timeout' | 'network' | 'api' | 'unauthorized' | 'step_up_required' | 'oauth' | 'sse';

/** Details of the failed request attached to every error the HTTP layer raises. */
export interface RequestInfo {
  method: string;
  url: string;
  /** Idempotency-Key that was sent; pass it again to retry the same logical operation later. */
  idempotencyKey?: string;
}

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

/** The API's `{error, message?}` plus a 422's `fields` (messages per dotted path). */
export type ApiErrorBody = ErrorBody & { fields?: ValidationErrorBody['fields'] };

export class ApiError extends PortcullisError {
  override name = 'ApiError';
  readonly status: number;
  /** The body's `error` code, or `http_<status>` when the body had none. */
  readonly error: string;
  readonly detail?: string;
  /** 422: messages per field, ready to map onto form inputs. */
  readonly fields?: Record<string, string[]>;
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

/** A 401 after a refresh, or a failed refresh (`onSignOut` already called): sign in again. */
export class UnauthorizedError extends ApiError {
  override name = 'UnauthorizedError';

  constructor(body: unknown, headers: Headers, options?: { cause?: unknown }) {
    super(401, body, headers, { code: 'unauthorized' });
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** RFC 9470: not refreshed (a refresh keeps the sign-in); sign in again with `acrValues`, `maxAge`. */
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
