import { compactVerify, errors as joseErrors } from 'jose';
import { parseAccessTokenClaims, type AccessTokenClaims } from './claims.js';
import type { DenyList } from './deny-list.js';
import { TokenError } from './errors.js';
import type { KeySource, SigningAlgorithm } from './jwks.js';
import type { TokenCache } from './token-cache.js';

export interface VerifyOptions {
  /** Exact expected `iss` (no normalisation: a trailing slash is another issuer). */
  issuer: string;
  /** This API's audience; `aud` must be it or contain it. */
  audience: string;
  /** A JWKS (remote or local) for RS256/ES256, or a shared secret for HS256. */
  keys: KeySource;
  /** Server-side allowlist; RS256+ES256 for a JWKS, HS256 for a secret by default; mixing refused. */
  algorithms?: readonly SigningAlgorithm[];
  /** Seconds of leeway on exp/nbf/iat. Default 30 (docs/security.md, decisions). */
  clockToleranceSec?: number;
  /** Largest accepted `exp - iat`, seconds. Default 3600: access tokens live under an hour. */
  maxLifetimeSec?: number;
  /** Longest accepted compact token, checked before any decoding. Default 4096. */
  maxTokenLength?: number;
  now?: () => number;
  denyList?: Pick<DenyList, 'isDenied'>;
  cache?: TokenCache;
}

interface Settings {
  issuer: string;
  audience: string;
  keys: KeySource;
  algorithms: ReadonlySet<string>;
  tolerance: number;
  maxLifetime: number;
  maxLength: number;
  now: () => number;
  denyList: Pick<DenyList, 'isDenied'> | undefined;
  cache: TokenCache | undefined;
}

const ASYMMETRIC = ['RS256', 'ES256'] as const;
export const BASE64URL = /^[A-Za-z0-9_-]+$/;
// RFC 9068 §2.1; RFC 8725 §3.11 explicit typing keeps ID tokens (typ JWT) out.
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt']);

function settings(options: VerifyOptions): Settings {
  const secret = options.keys.kind === 'secret';
  const algorithms = options.algorithms ?? (secret ? ['HS256'] : ASYMMETRIC);
  if (algorithms.length === 0) throw new TypeError('algorithms must not be empty');
  for (const alg of algorithms) {
    // Secret and public-key modes never mix, or HS256 "signed" with a public key verifies (RFC 8725 §2.1).
    const ok = secret ? alg === 'HS256' : (ASYMMETRIC as readonly string[]).includes(alg);
    if (!ok) throw new TypeError(`algorithm ${String(alg)} not allowed with this key source`);
  }
  if (!options.issuer || !options.audience) throw new TypeError('issuer and audience are required');
  return {
    issuer: options.issuer,
    audience: options.audience,
    keys: options.keys,
    algorithms: new Set(algorithms),
    tolerance: options.clockToleranceSec ?? 30,
    maxLifetime: options.maxLifetimeSec ?? 3600,
    maxLength: options.maxTokenLength ?? 4096,
    now: options.now ?? Date.now,
    denyList: options.denyList,
    cache: options.cache,
  };
}

export function decodeJson(segment: string): unknown {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Length and segment syntax: checked before anything is decoded. */
function checkLength(token: unknown, s: Settings): asserts token is string {
  if (typeof token !== 'string' || token.length === 0) throw new TokenError('token_malformed');
  if (token.length > s.maxLength) throw new TokenError('token_too_large');
}

function splitCompact(token: string): [string, string, string] {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenError('token_malformed', 'not a compact JWS');
  for (const [i, part] of parts.entries()) {
    // Node's decoder skips invalid characters, so check syntax first; an empty signature parses
    // here so that `alg: none` is refused by the algorithm check, by name.
    if (i === 2 && part === '') continue;
    if (!BASE64URL.test(part) || part.length % 4 === 1) {
      throw new TokenError('token_malformed', 'segment is not base64url');
    }
  }
  return parts as [string, string, string];
}

function checkHeader(encoded: string, s: Settings): { alg: SigningAlgorithm; kid: string } {
  const header = decodeJson(encoded);
  if (!isObject(header)) throw new TokenError('token_malformed', 'header is not a JSON object');
  const { alg, typ, kid } = header;
  if (typeof alg !== 'string' || !s.algorithms.has(alg)) {
    throw new TokenError(
      'alg_not_allowed',
      `alg ${JSON.stringify(String(alg)).slice(0, 40)} not allowed`,
    );
  }
  if (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase())) {
    throw new TokenError('typ_invalid', 'not an at+jwt access token');
  }
  if (typeof kid !== 'string' || kid.length === 0) throw new TokenError('kid_missing');
  if (kid.length > 256) throw new TokenError('kid_unknown', 'kid too long');
  return { alg: alg as SigningAlgorithm, kid };
}

// Stateless between calls (no `stream` option), so one decoder serves every request.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function checkClaims(payload: Uint8Array, s: Settings): AccessTokenClaims {
  let json: unknown;
  try {
    json = JSON.parse(UTF8.decode(payload));
  } catch {
    throw new TokenError('token_malformed', 'payload is not JSON');
  }
  if (!isObject(json)) throw new TokenError('token_malformed', 'payload is not a JSON object');
  // Issuer and audience first: a token for another service says nothing else of value.
  if (json['iss'] !== s.issuer) throw new TokenError('issuer_mismatch');
  const aud = json['aud'];
  if (!(aud === s.audience || (Array.isArray(aud) && aud.includes(s.audience)))) {
    throw new TokenError('audience_mismatch');
  }
  const parsed = parseAccessTokenClaims(json);
  if (!parsed.success) {
    throw new TokenError('claim_invalid', `claim ${parsed.path} missing or invalid`);
  }
  const claims = parsed.data;
  const nowSec = s.now() / 1000;
  if (claims.exp <= nowSec - s.tolerance) throw new TokenError('token_expired');
  if (claims.iat > nowSec + s.tolerance)
    throw new TokenError('token_not_yet_valid', 'iat in the future');
  if (claims.nbf !== undefined && claims.nbf > nowSec + s.tolerance) {
    throw new TokenError('token_not_yet_valid', 'nbf in the future');
  }
  if (claims.exp < claims.iat) throw new TokenError('claim_invalid', 'exp before iat');
  if (claims.exp - claims.iat > s.maxLifetime) throw new TokenError('lifetime_too_long');
  return claims;
}

function mapJoseError(error: unknown): TokenError {
  if (error instanceof TokenError) return error;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new TokenError('signature_invalid', 'signature verification failed', { cause: error });
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) {
    return new TokenError('alg_not_allowed', undefined, { cause: error });
  }
  return new TokenError('token_malformed', 'token could not be verified', { cause: error });
}

async function run(token: string, s: Settings): Promise<AccessTokenClaims> {
  checkLength(token, s);
  const cached = s.cache?.get(token);
  if (cached) {
    if (cached.exp <= s.now() / 1000 - s.tolerance) {
      s.cache!.delete(token);
      throw new TokenError('token_expired');
    }
    if (s.denyList?.isDenied(cached)) {
      s.cache!.delete(token);
      throw new TokenError('token_revoked');
    }
    return cached;
  }
  const [header] = splitCompact(token);
  const { alg, kid } = checkHeader(header, s);
  let payload: Uint8Array;
  try {
    const key = await s.keys.getKey(kid, alg);
    ({ payload } = await compactVerify(token, key, { algorithms: [alg] }));
  } catch (error) {
    throw mapJoseError(error);
  }
  const claims = checkClaims(payload, s);
  if (s.denyList?.isDenied(claims)) throw new TokenError('token_revoked');
  s.cache?.set(token, Object.freeze(claims));
  return claims;
}

/** Verifies an RFC 9068 access token; every refusal is a TokenError with a specific `code`. */
export function verifyAccessToken(
  token: string,
  options: VerifyOptions,
): Promise<AccessTokenClaims> {
  return run(token, settings(options));
}

/** A verifier with its options checked once; what apps and benchmarks should hold. */
export interface AccessTokenVerifier {
  verify(token: string): Promise<AccessTokenClaims>;
}

/** Validates `options` now (throws TypeError on a bad configuration) and returns a verifier. */
export function createAccessTokenVerifier(options: VerifyOptions): AccessTokenVerifier {
  const s = settings(options);
  return { verify: (token) => run(token, s) };
}
