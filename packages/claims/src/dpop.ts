import { constants, createPublicKey, hash, verify, type KeyObject } from 'node:crypto';
import { TokenError, type TokenErrorCode } from './errors.js';
import { createLru } from './lru.js';
import { BASE64URL, decodeJson, isObject } from './verify.js';

/** Asymmetric only: with `none` or HS* anyone could "sign". */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256'] as const;
export type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];

/** Remembers proof `jti`s: the first claim of an id wins, later ones are replays. */
export interface DpopReplayStore {
  /** True the first time `owner`'s `id` is claimed; throws when it cannot take it (503, fail closed). */
  claim(owner: string, id: string, ttlMs: number): Promise<boolean>;
}

/** Server-issued nonces (RFC 9449 §9): valid on every instance for a while, then rotated. */
export interface DpopNonces {
  /** The nonce clients should use now. */
  current(): Promise<string>;
  isValid(nonce: string): Promise<boolean>;
}

/** What a request says about its proof; apps build it from their request context. */
export interface DpopRequest {
  /** Every `DPoP` header value of the request (a header sent twice is two entries). */
  proofs: readonly string[];
  /** The request method as sent (compared case-sensitively with `htm`). */
  method: string;
  /** The externally visible URL of the request; query and fragment are ignored. */
  url: string;
  /** The same object for the request's lifetime: a proof rechecked for it (a long stream) is no replay. */
  request?: object;
}

export interface DpopVerifierOptions {
  /** Where proof `jti`s are remembered; in memory for one instance, Redis for several. */
  replay: DpopReplayStore;
  /** When set, every proof must carry a nonce it issued (`use_dpop_nonce` otherwise). */
  nonces?: DpopNonces | undefined;
  /** How far `iat` may be from now, seconds, besides the clock tolerance. Default 60. */
  iatWindowSec?: number;
  /** Seconds of clock tolerance, as for access tokens. Default 30. */
  clockToleranceSec?: number;
  /** A subset of DPOP_ALGORITHMS. Default all of them. */
  algorithms?: readonly DpopAlgorithm[];
  /** Longest accepted proof, checked before decoding. Default 8192 (an RSA-4096 key fits). */
  maxProofLength?: number;
  /** Checked proof headers (and as many `ath` hashes) kept, least recently used out. Default 1000. */
  keyCacheSize?: number;
  now?: () => number;
}

export interface DpopVerifier {
  /** The accepted algorithms, for the `algs` challenge parameter. */
  readonly algorithms: readonly DpopAlgorithm[];
  readonly nonces: DpopNonces | undefined;
  /** Checks the proof for `token` bound to `jkt` (RFC 9449 §4.3, §7.1); throws the first failure. */
  verify(request: DpopRequest | undefined, token: string, jkt: string): Promise<void>;
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
// RFC 7638 §3.2: the required members of each key type, in lexicographic order.
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  OKP: ['crv', 'kty', 'x'],
};
const MAX_JTI_LENGTH = 256;

const curve = (name: string) => (key: KeyObject) =>
  key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === name;
const rsa = (key: KeyObject) =>
  key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048;
const ed25519 = (key: KeyObject) => key.asymmetricKeyType === 'ed25519';
const PSS = { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 };

/** Checks `signature` over `signed` with `key` (RFC 7518 §3), as one algorithm does. */
type SignatureCheck = (signed: Buffer, key: KeyObject, signature: Buffer) => boolean;

// RFC 7518 §3.4 r||s to DER ourselves: node's `dsaEncoding` needs an options object, which is slow.
function derSignature(signature: Buffer, size: number): Buffer | undefined {
  if (signature.length !== 2 * size) return undefined;
  const integer = (bytes: Buffer) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const pad = bytes[start]! & 0x80 ? 1 : 0;
    return { bytes: bytes.subarray(start), pad };
  };
  const r = integer(signature.subarray(0, size));
  const s = integer(signature.subarray(size));
  const rLength = r.pad + r.bytes.length;
  const sLength = s.pad + s.bytes.length;
  // At most 2 * (48 + 1) + 4 bytes for ES384: every length fits one byte.
  const der = Buffer.alloc(6 + rLength + sLength);
  der[0] = 0x30;
  der[1] = 4 + rLength + sLength;
  der[2] = 0x02;
  der[3] = rLength;
  r.bytes.copy(der, 4 + r.pad);
  der[4 + rLength] = 0x02;
  der[5 + rLength] = sLength;
  s.bytes.copy(der, 6 + rLength + s.pad);
  return der;
}

const ecdsa =
  (hashName: string, size: number): SignatureCheck =>
  (signed, key, signature) => {
    const der = derSignature(signature, size);
    return der !== undefined && verify(hashName, signed, key, der);
  };

// node:crypto directly: WebCrypto's async round trip costs as much as the check itself.
const ALGORITHMS: Record<
  DpopAlgorithm,
  { fits: (key: KeyObject) => boolean; check: SignatureCheck }
> = {
  ES256: { fits: curve('prime256v1'), check: ecdsa('sha256', 32) },
  ES384: { fits: curve('secp384r1'), check: ecdsa('sha384', 48) },
  EdDSA: { fits: ed25519, check: (signed, key, sig) => verify(null, signed, key, sig) },
  Ed25519: { fits: ed25519, check: (signed, key, sig) => verify(null, signed, key, sig) },
  PS256: {
    fits: rsa,
    check: (signed, key, sig) => verify('sha256', signed, { key, ...PSS }, sig),
  },
  RS256: { fits: rsa, check: (signed, key, sig) => verify('sha256', signed, key, sig) },
};

const refuse = (code: TokenErrorCode, message: string, nonce?: string) =>
  new TokenError(code, message, { scheme: 'DPoP', ...(nonce === undefined ? {} : { nonce }) });

const sha256 = (text: string) => hash('sha256', text, 'base64url');
// Stateless without `stream`, so one decoder serves every proof.
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const isBase64url = (part: string) => BASE64URL.test(part) && part.length % 4 !== 1;

/** RFC 7638 SHA-256 thumbprint of a public JWK; undefined for a key type DPoP cannot use. */
export function jwkThumbprint(jwk: Record<string, unknown>): string | undefined {
  const members = typeof jwk['kty'] === 'string' ? THUMBPRINT_MEMBERS[jwk['kty']] : undefined;
  if (!members) return undefined;
  const required: Record<string, unknown> = {};
  for (const name of members) {
    if (typeof jwk[name] !== 'string') return undefined;
    required[name] = jwk[name];
  }
  return sha256(JSON.stringify(required));
}

/** Scheme, host and path of an http(s) URL, normalised (RFC 3986 §6.2.2-6.2.3); else undefined. */
export function htuOf(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return `${url.origin}${url.pathname}`;
}

interface ProofHeader {
  alg: DpopAlgorithm;
  jwk: Record<string, unknown>;
  jkt: string;
}

/** A header that passed its checks, with the key it names imported. */
interface CheckedHeader {
  jkt: string;
  key: KeyObject;
  check: SignatureCheck;
}

interface ProofClaims {
  jti: string;
  htm: string;
  htu: string;
  iat: number;
  ath?: unknown;
  nonce?: unknown;
}

function checkHeader(encoded: string, algorithms: ReadonlySet<string>): ProofHeader {
  const header = decodeJson(encoded);
  if (!isObject(header)) throw refuse('dpop_proof_invalid', 'header is not a JSON object');
  const { typ, alg, jwk } = header;
  // RFC 9449 §4.2: explicit typing keeps other JWTs (an access token, an ID token) out.
  if (typeof typ !== 'string' || typ.toLowerCase() !== 'dpop+jwt') {
    throw refuse('dpop_proof_invalid', 'typ is not dpop+jwt');
  }
  if (typeof alg !== 'string' || !algorithms.has(alg)) {
    throw refuse(
      'dpop_proof_invalid',
      `alg ${JSON.stringify(String(alg)).slice(0, 40)} not allowed`,
    );
  }
  if (!isObject(jwk)) throw refuse('dpop_proof_invalid', 'no jwk in the header');
  if (PRIVATE_MEMBERS.some((name) => name in jwk)) {
    throw refuse('dpop_proof_invalid', 'jwk is not a public key');
  }
  const jkt = jwkThumbprint(jwk);
  if (jkt === undefined) throw refuse('dpop_proof_invalid', 'jwk is not an EC, RSA or OKP key');
  return { alg: alg as DpopAlgorithm, jwk, jkt };
}

function checkClaimsShape(payload: Uint8Array): ProofClaims {
  let json: unknown;
  try {
    json = JSON.parse(UTF8.decode(payload));
  } catch {
    throw refuse('dpop_proof_invalid', 'payload is not JSON');
  }
  if (!isObject(json)) throw refuse('dpop_proof_invalid', 'payload is not a JSON object');
  const { jti, htm, htu, iat } = json;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
    throw refuse('dpop_proof_invalid', 'jti missing or invalid');
  }
  if (typeof htm !== 'string' || typeof htu !== 'string') {
    throw refuse('dpop_proof_invalid', 'htm or htu missing');
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat)) {
    throw refuse('dpop_proof_invalid', 'iat missing or invalid');
  }
  return json as unknown as ProofClaims;
}

/** A compact JWS's parts; `signed` is the header and payload as they were signed. */
interface ProofParts {
  header: string;
  payload: string;
  signature: string;
  signed: string;
}

/** Splits and checks the syntax of the payload and signature; the header's is headerFor's. */
function splitProof(proof: string, maxLength: number): ProofParts {
  if (proof.length === 0 || proof.length > maxLength) {
    throw refuse('dpop_proof_invalid', 'empty or too large');
  }
  const first = proof.indexOf('.');
  const last = proof.lastIndexOf('.');
  const header = proof.slice(0, first);
  const payload = proof.slice(first + 1, last);
  const signature = proof.slice(last + 1);
  if (first === last || !isBase64url(payload) || !isBase64url(signature)) {
    throw refuse('dpop_proof_invalid', 'not a compact JWS');
  }
  return { header, payload, signature, signed: proof.slice(0, last) };
}

function importKey(header: ProofHeader): CheckedHeader {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: header.jwk as never, format: 'jwk' });
  } catch (error) {
    throw new TokenError('dpop_proof_invalid', 'jwk cannot be imported', {
      cause: error,
      scheme: 'DPoP',
    });
  }
  const { fits, check } = ALGORITHMS[header.alg];
  if (!fits(key)) throw refuse('dpop_proof_invalid', `jwk is not a key for ${header.alg}`);
  return { jkt: header.jkt, key, check };
}

/** Validates `options` now (throws TypeError on a bad configuration) and returns a verifier. */
export function createDpopVerifier(options: DpopVerifierOptions): DpopVerifier {
  const algorithms = options.algorithms ?? DPOP_ALGORITHMS;
  if (algorithms.length === 0) throw new TypeError('algorithms must not be empty');
  for (const alg of algorithms) {
    if (!(DPOP_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new TypeError(`DPoP algorithm ${String(alg)} not allowed`);
    }
  }
  const allowed = new Set<string>(algorithms);
  const windowSec = (options.iatWindowSec ?? 60) + (options.clockToleranceSec ?? 30);
  const maxLength = options.maxProofLength ?? 8192;
  const now = options.now ?? Date.now;
  const { replay, nonces } = options;
  // Checked headers by their encoded form: a client signs every proof with the same key.
  const cacheSize = options.keyCacheSize ?? 1000;
  const headers = createLru<string, CheckedHeader>(cacheSize);
  // `ath` hashes by the token's end, compared whole on a hit (as in token-cache.ts).
  const tokenHashes = createLru<string, { token: string; hash: string }>(cacheSize);
  const tokenHash = (token: string) => {
    const key = token.slice(-32);
    const hit = tokenHashes.get(key);
    if (hit?.token === token) return hit.hash;
    const digest = sha256(token);
    tokenHashes.set(key, { token, hash: digest });
    return digest;
  };
  // Proofs already accepted for a request (see DpopRequest.request).
  const accepted = new WeakMap<object, { proof: string; token: string }>();

  // Its key must be the token's before anything costly; a cached header passed every check.
  function headerFor(encoded: string, jkt: string): CheckedHeader {
    let checked = headers.get(encoded);
    if (checked === undefined) {
      if (!isBase64url(encoded)) throw refuse('dpop_proof_invalid', 'not a compact JWS');
      const header = checkHeader(encoded, allowed);
      if (header.jkt !== jkt) throw refuse('dpop_key_mismatch', 'proof key is not the token key');
      checked = importKey(header);
      headers.set(encoded, checked);
    } else if (checked.jkt !== jkt) {
      throw refuse('dpop_key_mismatch', 'proof key is not the token key');
    }
    return checked;
  }

  function verifySignature(parts: ProofParts, header: CheckedHeader): Uint8Array {
    const signed = Buffer.from(parts.signed);
    const signature = Buffer.from(parts.signature, 'base64url');
    let valid: boolean;
    try {
      valid = header.check(signed, header.key, signature);
    } catch (error) {
      throw new TokenError('dpop_proof_invalid', 'proof could not be verified', {
        cause: error,
        scheme: 'DPoP',
      });
    }
    if (!valid) throw refuse('dpop_proof_invalid', 'signature verification failed');
    return Buffer.from(parts.payload, 'base64url');
  }

  async function checkNonce(issued: DpopNonces, claims: ProofClaims): Promise<void> {
    const valid = typeof claims.nonce === 'string' && (await issued.isValid(claims.nonce));
    if (!valid) {
      throw refuse(
        'dpop_nonce_required',
        'a current server nonce is required',
        await issued.current(),
      );
    }
  }

  async function claimJti(jkt: string, claims: ProofClaims, nowSec: number): Promise<void> {
    // Remembered until the proof's iat leaves the window, so it can never be accepted twice.
    const ttlMs = Math.ceil((claims.iat + windowSec - nowSec) * 1000) + 1000;
    let first: boolean;
    try {
      first = await replay.claim(jkt, sha256(claims.jti), ttlMs);
    } catch (error) {
      throw new TokenError('dpop_store_unavailable', 'the proof replay store did not answer', {
        cause: error,
        scheme: 'DPoP',
      });
    }
    if (!first) throw refuse('dpop_proof_replayed', 'this proof was already used');
  }

  return {
    algorithms,
    nonces,
    async verify(request, token, jkt) {
      const proofs = request?.proofs ?? [];
      if (proofs.length === 0) throw refuse('dpop_proof_missing', 'no DPoP header');
      // Node joins a repeated header with ", ", which no compact JWS contains.
      if (proofs.length > 1 || proofs[0]!.includes(',')) {
        throw refuse('dpop_proof_multiple', 'more than one DPoP header');
      }
      const proof = proofs[0]!;
      const previous = request!.request && accepted.get(request!.request);
      if (previous && previous.proof === proof && previous.token === token) return;

      const parts = splitProof(proof, maxLength);
      const header = headerFor(parts.header, jkt);
      const claims = checkClaimsShape(verifySignature(parts, header));
      if (claims.htm !== request!.method)
        throw refuse('dpop_proof_mismatch', 'htm is not the method');
      const { url } = request!;
      // Most clients name the URL exactly as the server sees it: no parse needed then.
      if (claims.htu !== url) {
        const expected = htuOf(url);
        if (expected === undefined || htuOf(claims.htu) !== expected) {
          throw refuse('dpop_proof_mismatch', 'htu is not the request URL');
        }
      }
      const nowSec = now() / 1000;
      if (Math.abs(nowSec - claims.iat) > windowSec) {
        throw refuse('dpop_proof_stale', 'iat outside the accepted window');
      }
      if (claims.ath !== tokenHash(token)) {
        throw refuse('dpop_proof_mismatch', 'ath is not the token hash');
      }
      if (nonces) await checkNonce(nonces, claims);
      await claimJti(header.jkt, claims, nowSec);
      if (request!.request) accepted.set(request!.request, { proof, token });
    },
  };
}
