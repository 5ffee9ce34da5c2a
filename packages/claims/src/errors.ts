/** Why a credential was refused. Stable strings: apps log and may expose them. */
export type TokenErrorCode =
  | 'authorization_malformed'
  | 'scheme_unsupported'
  | 'token_malformed'
  | 'token_too_large'
  | 'alg_not_allowed'
  | 'typ_invalid'
  | 'kid_missing'
  | 'kid_unknown'
  | 'jwks_unavailable'
  | 'signature_invalid'
  | 'claim_invalid'
  | 'token_expired'
  | 'token_not_yet_valid'
  | 'lifetime_too_long'
  | 'issuer_mismatch'
  | 'audience_mismatch'
  | 'token_revoked';

/**
 * A refused credential. `status` is 401 except `jwks_unavailable` (503: the token may be
 * fine, the server cannot check it, so the client must not throw away its session).
 * `oauthError` is the RFC 6750 §3.1 value for `WWW-Authenticate: Bearer error="…"`.
 */
export class TokenError extends Error {
  override readonly name = 'TokenError';
  readonly code: TokenErrorCode;
  readonly status: 401 | 503;
  readonly expose = true;
  readonly oauthError: 'invalid_request' | 'invalid_token';

  constructor(code: TokenErrorCode, message: string = code, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = code === 'jwks_unavailable' ? 503 : 401;
    this.oauthError = code === 'authorization_malformed' ? 'invalid_request' : 'invalid_token';
  }
}

/** An authenticated principal lacks a permission (RFC 9110 §15.5.4). Body: `{"error":"forbidden"}`. */
export class ForbiddenError extends Error {
  override readonly name = 'ForbiddenError';
  readonly code = 'forbidden' as const;
  readonly status = 403 as const;
  readonly expose = true;
  /** The permission that was required; for logs, not for the response body. */
  readonly permission: string;

  constructor(permission: string) {
    super(`missing permission ${permission}`);
    this.permission = permission;
  }
}

/** True for a TokenError, optionally with one of the given codes. */
export function isTokenError(error: unknown, ...codes: TokenErrorCode[]): error is TokenError {
  return error instanceof TokenError && (codes.length === 0 || codes.includes(error.code));
}
