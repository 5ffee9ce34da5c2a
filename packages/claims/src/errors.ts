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
  | 'token_revoked'
  // DPoP (RFC 9449; see docs/dpop.md): the token's binding and the request's proof.
  | 'token_bound'
  | 'token_not_bound'
  | 'dpop_proof_missing'
  | 'dpop_proof_multiple'
  | 'dpop_proof_invalid'
  | 'dpop_proof_mismatch'
  | 'dpop_proof_stale'
  | 'dpop_proof_replayed'
  | 'dpop_key_mismatch'
  | 'dpop_nonce_required'
  | 'dpop_store_unavailable';

/** The `error` of the challenge: RFC 6750 §3.1 for Bearer, RFC 9449 §7.1 for DPoP. */
export type OAuthTokenError =
  'invalid_request' | 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce';

// Problems with the proof rather than the token: the client may retry with a new proof.
const PROOF_CODES: ReadonlySet<TokenErrorCode> = new Set([
  'dpop_proof_missing',
  'dpop_proof_multiple',
  'dpop_proof_invalid',
  'dpop_proof_mismatch',
  'dpop_proof_stale',
  'dpop_proof_replayed',
  'dpop_key_mismatch',
]);
// The credential may be fine; the server cannot check it now.
const UNAVAILABLE_CODES: ReadonlySet<TokenErrorCode> = new Set([
  'jwks_unavailable',
  'dpop_store_unavailable',
]);

// Enough for a developer, nothing the holder could not decode; fixed, as they go in a quoted-string.
const DESCRIPTIONS: Record<TokenErrorCode, string> = {
  authorization_malformed: 'Authorization header malformed',
  scheme_unsupported: 'authorization scheme not supported',
  token_malformed: 'token malformed',
  token_too_large: 'token too large',
  alg_not_allowed: 'token signing algorithm not allowed',
  typ_invalid: 'token is not an access token (typ at+jwt)',
  kid_missing: 'token has no kid',
  kid_unknown: 'token signing key unknown',
  jwks_unavailable: 'signing keys unavailable; retry later',
  signature_invalid: 'token signature not valid',
  claim_invalid: 'token claims not valid',
  token_expired: 'token expired',
  token_not_yet_valid: 'token not yet valid',
  lifetime_too_long: 'token lifetime too long',
  issuer_mismatch: 'token issuer unknown',
  audience_mismatch: 'token audience is not this API',
  token_revoked: 'token revoked',
  token_bound: 'token is DPoP-bound: send it with the DPoP scheme and a proof',
  token_not_bound: 'token is not DPoP-bound: send it with the Bearer scheme',
  dpop_proof_missing: 'DPoP proof required',
  dpop_proof_multiple: 'exactly one DPoP proof allowed',
  dpop_proof_invalid: 'DPoP proof not valid',
  dpop_proof_mismatch: 'DPoP proof is not for this method and URL',
  dpop_proof_stale: 'DPoP proof iat too far from the server clock',
  dpop_proof_replayed: 'DPoP proof already used',
  dpop_key_mismatch: 'DPoP proof key is not the key the token is bound to',
  dpop_nonce_required: 'DPoP nonce required',
  dpop_store_unavailable: 'DPoP proofs cannot be checked right now; retry later',
};

function oauthErrorOf(code: TokenErrorCode): OAuthTokenError {
  if (code === 'authorization_malformed') return 'invalid_request';
  if (code === 'dpop_nonce_required') return 'use_dpop_nonce';
  return PROOF_CODES.has(code) ? 'invalid_dpop_proof' : 'invalid_token';
}

/** A refused credential: 401, or 503 when it cannot be checked now (the client keeps its session). */
export class TokenError extends Error {
  override readonly name = 'TokenError';
  readonly code: TokenErrorCode;
  readonly status: 401 | 503;
  readonly expose = true;
  readonly oauthError: OAuthTokenError;
  readonly scheme: 'Bearer' | 'DPoP';
  readonly nonce: string | undefined;
  readonly description: string;

  constructor(
    code: TokenErrorCode,
    message: string = code,
    options?: { cause?: unknown; scheme?: 'Bearer' | 'DPoP'; nonce?: string },
  ) {
    super(message, options);
    this.code = code;
    this.status = UNAVAILABLE_CODES.has(code) ? 503 : 401;
    this.oauthError = oauthErrorOf(code);
    this.scheme = options?.scheme ?? 'Bearer';
    this.nonce = options?.nonce;
    this.description = DESCRIPTIONS[code];
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

export function isTokenError(error: unknown, ...codes: TokenErrorCode[]): error is TokenError {
  return error instanceof TokenError && (codes.length === 0 || codes.includes(error.code));
}
