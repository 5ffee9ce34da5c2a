import { DPOP_ALGORITHMS } from './dpop.js';
import { ForbiddenError, TokenError, type TokenErrorCode } from './errors.js';
import { API_SCOPE, hasPermission } from './permissions.js';
import type { Principal } from './principal.js';
import type { StepUpRequirement, StepUpShortfall } from './step-up.js';

// The one place that writes `WWW-Authenticate` and refusal bodies (docs/api-contracts.md "Errors").

/** How a resource server presents itself in its challenges. */
export interface ChallengeSettings {
  /** The `realm` of every challenge. Default `portcullis`. */
  realm?: string | undefined;
  /** DPoP proof algorithms offered in `algs`; `false` offers only Bearer. Default DPOP_ALGORITHMS. */
  dpopAlgorithms?: readonly string[] | false | undefined;
  /** RFC 9728 metadata URL, sent as `resource_metadata` in every challenge. */
  resourceMetadata?: string | undefined;
}

/** The `error` codes of a refusal: RFC 6750, RFC 9449 and RFC 9470 plus the API's own. */
export type AuthenticationErrorCode =
  | 'unauthenticated'
  | 'invalid_request'
  | 'invalid_token'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'insufficient_user_authentication'
  | 'forbidden'
  | 'temporarily_unavailable';

/** Why a request was refused, for logs: a TokenError code, a step-up shortfall, or below. */
export type AuthenticationReason =
  | TokenErrorCode
  | StepUpShortfall
  | 'credential_missing'
  | 'credential_unresolved'
  | 'permission_missing'
  | 'scope_missing';

/** What one challenge says besides the realm. */
export interface Challenge {
  /** The scheme the request used; its challenge comes first and carries the error. */
  scheme?: 'Bearer' | 'DPoP' | undefined;
  /** Omitted when no credential was presented (RFC 6750 §3: bare challenges). */
  error?: string | undefined;
  /** A fixed text: no quotes or backslashes (it is a quoted-string). */
  description?: string | undefined;
  /** RFC 9470: the acceptable `acr` values, space-separated. */
  acrValues?: string | undefined;
  /** RFC 9470: the largest accepted age of the sign-in, seconds. */
  maxAgeSec?: number | undefined;
  /** RFC 6750 §3: the scope the route needs (any 401) or the request lacked (`insufficient_scope`). */
  scope?: string | undefined;
}

/** Both accepted schemes (RFC 9110 §11.6.1), the request's first with the error; DPoP lists `algs`. */
export function wwwAuthenticate(settings: ChallengeSettings, challenge: Challenge = {}): string {
  const realm = `realm="${settings.realm ?? 'portcullis'}"`;
  const metadata =
    settings.resourceMetadata === undefined
      ? ''
      : `, resource_metadata="${settings.resourceMetadata}"`;
  let params = '';
  if (challenge.error !== undefined) {
    params += `, error="${challenge.error}"`;
    if (challenge.description !== undefined)
      params += `, error_description="${challenge.description}"`;
    if (challenge.acrValues !== undefined) params += `, acr_values="${challenge.acrValues}"`;
    if (challenge.maxAgeSec !== undefined) params += `, max_age=${challenge.maxAgeSec}`;
  }
  // Not error information: a bare challenge names it too, in both schemes, as an MCP client reads it.
  const scope = challenge.scope === undefined ? '' : `, scope="${challenge.scope}"`;
  const algorithms = settings.dpopAlgorithms ?? DPOP_ALGORITHMS;
  const scheme = algorithms === false ? 'Bearer' : (challenge.scheme ?? 'Bearer');
  const bearer = `Bearer ${realm}${scheme === 'Bearer' ? params : ''}${scope}${metadata}`;
  if (algorithms === false) return bearer;
  const dpop = `DPoP ${realm}${scheme === 'DPoP' ? params : ''}${scope}, algs="${algorithms.join(' ')}"${metadata}`;
  return scheme === 'DPoP' ? `${dpop}, ${bearer}` : `${bearer}, ${dpop}`;
}

/** The JSON body of a refusal: `{"error", "message"?}`, plus what a step-up asks for. */
export interface AuthenticationErrorBody {
  error: AuthenticationErrorCode;
  message?: string;
  acr_values?: string;
  max_age?: number;
}

interface AuthenticationErrorOptions {
  /** The body's `message` (and the challenge's `error_description` on a 401). */
  description?: string | undefined;
  headers?: Record<string, string>;
  reason: AuthenticationReason;
  acrValues?: string | undefined;
  maxAgeSec?: number | undefined;
  cause?: unknown;
}

/** A refused request, ready to send; `reason` is for logs, the client sees only `description`. */
export class AuthenticationError extends Error {
  override readonly name = 'AuthenticationError';
  readonly expose = true;
  readonly status: 400 | 401 | 403 | 503;
  readonly code: AuthenticationErrorCode;
  readonly reason: AuthenticationReason;
  readonly description: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly acrValues: string | undefined;
  readonly maxAgeSec: number | undefined;

  constructor(
    status: 400 | 401 | 403 | 503,
    code: AuthenticationErrorCode,
    options: AuthenticationErrorOptions,
  ) {
    super(options.description ?? code, { cause: options.cause });
    this.status = status;
    this.code = code;
    this.reason = options.reason;
    this.description = options.description;
    this.headers = Object.freeze({ ...options.headers });
    this.acrValues = options.acrValues;
    this.maxAgeSec = options.maxAgeSec;
  }

  body(): AuthenticationErrorBody {
    const body: AuthenticationErrorBody = { error: this.code };
    if (this.description !== undefined && this.code !== 'forbidden') {
      body.message = this.description;
    }
    if (this.acrValues !== undefined) body.acr_values = this.acrValues;
    if (this.maxAgeSec !== undefined) body.max_age = this.maxAgeSec;
    return body;
  }
}

/** 401 codes: the challenge `error`, or none for `unauthenticated`. */
export type UnauthorizedCode =
  'unauthenticated' | 'invalid_request' | 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce';

/** The headers of a 401: the challenges and, with `use_dpop_nonce`, the nonce to use (RFC 9449 §9). */
export function unauthorizedHeaders(
  settings: ChallengeSettings,
  code: UnauthorizedCode,
  options: {
    scheme?: 'Bearer' | 'DPoP' | undefined;
    description?: string | undefined;
    nonce?: string;
    /** The scope the route needs (RFC 6750 §3), to ask the authorization server for. */
    scope?: string | undefined;
  } = {},
): Record<string, string> {
  const error = code === 'unauthenticated' ? undefined : code;
  return {
    'WWW-Authenticate': wwwAuthenticate(settings, {
      scheme: options.scheme,
      error,
      description: options.description,
      scope: options.scope,
    }),
    ...(options.nonce === undefined ? {} : { 'DPoP-Nonce': options.nonce }),
  };
}

/** 401 without a usable credential: bare challenges, or `invalid_token` when one was sent. */
export function unauthenticated(
  settings: ChallengeSettings,
  presented: boolean,
  scope?: string,
): AuthenticationError {
  const code = presented ? 'invalid_token' : 'unauthenticated';
  return new AuthenticationError(401, code, {
    reason: presented ? 'credential_unresolved' : 'credential_missing',
    headers: unauthorizedHeaders(settings, code, { scope }),
  });
}

/** 401 with the request scheme's challenge, or 503 + Retry-After when the token cannot be checked now. */
export function fromTokenError(
  settings: ChallengeSettings,
  error: TokenError,
  scope?: string,
): AuthenticationError {
  if (error.status === 503) {
    return new AuthenticationError(503, 'temporarily_unavailable', {
      description: 'cannot verify tokens right now',
      reason: error.code,
      headers: { 'Retry-After': '5' },
      cause: error,
    });
  }
  const options = {
    scheme: error.scheme,
    description: error.description,
    scope,
    ...(error.nonce === undefined ? {} : { nonce: error.nonce }),
  };
  return new AuthenticationError(401, error.oauthError, {
    description: error.description,
    reason: error.code,
    headers: unauthorizedHeaders(settings, error.oauthError, options),
    cause: error,
  });
}

/** Fixed texts of a step-up refusal (they go into a quoted-string). */
export const STEP_UP_DESCRIPTIONS = {
  acr_too_weak: 'this operation requires a sign-in with a second factor',
  sign_in_too_old: 'this operation requires a more recent sign-in',
} as const;

/** RFC 9470 §3: 401 `insufficient_user_authentication`; 403 for a credential that is no user sign-in. */
export function stepUpError(
  settings: ChallengeSettings,
  shortfall: StepUpShortfall,
  requirement: StepUpRequirement,
  scheme: 'Bearer' | 'DPoP' = 'Bearer',
): AuthenticationError {
  if (shortfall === 'no_user_sign_in') return forbidden(shortfall);
  const description = STEP_UP_DESCRIPTIONS[shortfall];
  const challenge = { acrValues: requirement.acr, maxAgeSec: requirement.maxAgeSec, description };
  return new AuthenticationError(401, 'insufficient_user_authentication', {
    ...challenge,
    reason: shortfall,
    headers: {
      'WWW-Authenticate': wwwAuthenticate(settings, {
        ...challenge,
        scheme,
        error: 'insufficient_user_authentication',
      }),
    },
  });
}

/** 403 `{"error":"forbidden"}`; a missing scope adds RFC 6750's `insufficient_scope` challenge. */
export function forbidden(
  reason: AuthenticationReason,
  options: { settings?: ChallengeSettings; scope?: string; scheme?: 'Bearer' | 'DPoP' } = {},
): AuthenticationError {
  const { settings, scope, scheme } = options;
  const headers: Record<string, string> =
    settings && scope !== undefined
      ? {
          'WWW-Authenticate': wwwAuthenticate(settings, {
            scheme,
            error: 'insufficient_scope',
            scope,
          }),
        }
      : {};
  return new AuthenticationError(403, 'forbidden', { reason, headers });
}

/**
 * 403 for a permission not held: `insufficient_scope` naming it when an access token's scope
 * left it out (a new token with that scope may hold it), else plain: the roles or an API key
 * lack it, and asking for more scope cannot help (docs/api-contracts.md "Scope in challenges").
 */
export function permissionRefusal(
  principal: Pick<Principal, 'authMethod' | 'scope'>,
  permission: string,
  options: { settings: ChallengeSettings; scheme?: 'Bearer' | 'DPoP' | undefined },
): AuthenticationError {
  const scopeAllows =
    principal.scope.includes(API_SCOPE) || hasPermission(principal.scope, permission);
  if (principal.authMethod !== 'jwt' || scopeAllows) return forbidden('permission_missing');
  return forbidden('scope_missing', {
    settings: options.settings,
    scope: permission,
    scheme: options.scheme,
  });
}

/** Any authentication or authorization error as its answer; undefined for anything else. */
export function authenticationErrorOf(
  settings: ChallengeSettings,
  error: unknown,
  scope?: string,
): AuthenticationError | undefined {
  if (error instanceof AuthenticationError) return error;
  if (error instanceof TokenError) return fromTokenError(settings, error, scope);
  if (error instanceof ForbiddenError) return forbidden('permission_missing');
  return undefined;
}
