// DPoP proofs with a non-extractable WebCrypto key (README "DPoP"); a stored CryptoKeyPair stays so.
import { base64url } from './encoding.js';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNATURE = { name: 'ECDSA', hash: 'SHA-256' } as const;

type WebCryptoKey = InstanceType<typeof CryptoKey>;

export interface DpopKeyPair {
  publicKey: WebCryptoKey;
  privateKey: WebCryptoKey;
}

/** A public P-256 key as a JWK (RFC 7517), the members RFC 7638 hashes. */
export interface DpopPublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

export interface DpopProofOptions {
  /** The access token the request presents: its hash goes in `ath`. */
  accessToken?: string;
  /** A nonce to use instead of the last one the server gave for this origin. */
  nonce?: string;
}

/** A DPoP key pair and the per-server nonces it has been given. */
export interface DpopKey {
  /** The key pair; the private key is non-extractable. Store it to survive a reload. */
  readonly keyPair: DpopKeyPair;
  readonly publicJwk: DpopPublicJwk;
  /** RFC 7638 thumbprint of the public key: the `cnf.jkt` of the tokens bound to it. */
  readonly thumbprint: string;
  /** A proof JWT for one request, with `ath` for an access token and the origin's last nonce. */
  proof(method: string, url: string, options?: DpopProofOptions): Promise<string>;
  /** Keeps the origin's `DPoP-Nonce`; true when new, so a `use_dpop_nonce` refusal is worth one retry. */
  updateNonce(url: string, headers: Headers): boolean;
}

export interface CreateDpopKeyOptions {
  /** An existing P-256 ECDSA key pair (e.g. read back from IndexedDB); a new one otherwise. */
  keyPair?: DpopKeyPair;
}

const encoder = new TextEncoder();
const encodeJson = (value: unknown): string => base64url(encoder.encode(JSON.stringify(value)));

async function sha256(text: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text))));
}

/** RFC 7638: SHA-256 of the required members in lexicographic order, no whitespace. */
export async function jwkThumbprint(jwk: DpopPublicJwk): Promise<string> {
  return sha256(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }));
}

async function publicJwkOf(publicKey: WebCryptoKey): Promise<DpopPublicJwk> {
  const jwk = await crypto.subtle.exportKey('jwk', publicKey);
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y) {
    throw new TypeError('a DPoP key must be a P-256 ECDSA key pair');
  }
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}

function targetUri(url: string): string {
  const target = new URL(url);
  target.search = '';
  target.hash = '';
  return target.href;
}

/** Use the same key for token requests and API calls: a refresh proven with another is refused. */
export async function createDpopKey(options: CreateDpopKeyOptions = {}): Promise<DpopKey> {
  const keyPair =
    options.keyPair ??
    ((await crypto.subtle.generateKey(ALGORITHM, false, ['sign', 'verify'])) as DpopKeyPair);
  const publicJwk = await publicJwkOf(keyPair.publicKey);
  const thumbprint = await jwkThumbprint(publicJwk);
  const header = encodeJson({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk });
  const nonces = new Map<string, string>();

  return {
    keyPair,
    publicJwk,
    thumbprint,
    async proof(method, url, proofOptions = {}) {
      const nonce = proofOptions.nonce ?? nonces.get(new URL(url).origin);
      const payload = encodeJson({
        jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
        htm: method.toUpperCase(),
        htu: targetUri(url),
        iat: Math.floor(Date.now() / 1000),
        ...(proofOptions.accessToken !== undefined
          ? { ath: await sha256(proofOptions.accessToken) }
          : {}),
        ...(nonce !== undefined ? { nonce } : {}),
      });
      const input = `${header}.${payload}`;
      // WebCrypto's ECDSA signature is r || s, the form JWS uses (RFC 7518 §3.4).
      const signature = await crypto.subtle.sign(
        SIGNATURE,
        keyPair.privateKey,
        encoder.encode(input),
      );
      return `${input}.${base64url(new Uint8Array(signature))}`;
    },
    updateNonce(url, headers) {
      const nonce = headers.get('DPoP-Nonce');
      if (!nonce) return false;
      const origin = new URL(url).origin;
      if (nonces.get(origin) === nonce) return false;
      nonces.set(origin, nonce);
      return true;
    },
  };
}

/** True when a resource server's 401 asks for a (new) DPoP nonce (RFC 9449 §9). */
export function isUseDpopNonceChallenge(headers: Headers): boolean {
  const challenge = headers.get('WWW-Authenticate') ?? '';
  return /(^|[\s,])DPoP\b[^]*\berror="use_dpop_nonce"/i.test(challenge);
}
