import { importJWK, type CryptoKey, type JWK } from 'jose';
import { TokenError } from './errors.js';

/** Algorithms verifiable with a public key from the JWKS. */
export type AsymmetricAlgorithm = 'RS256' | 'ES256';
/** Every algorithm this package can ever accept; `none` is not and cannot be one. */
export type SigningAlgorithm = AsymmetricAlgorithm | 'HS256';

/** Keys chosen by `kid` and the server-side algorithm only; `jwk`/`jku`/`x5u`/`x5c` never read. */
export interface KeySource {
  readonly kind: 'jwks' | 'secret';
  /** Throws TokenError `kid_unknown` or `jwks_unavailable`. */
  getKey(kid: string, alg: SigningAlgorithm): Promise<CryptoKey | Uint8Array>;
}

export interface RemoteKeySet extends KeySource {
  /** Fetches now (bypassing max age and cooldown); for start-up warm-up and readiness. */
  refresh(): Promise<void>;
}

/** The keys of a JWKS document (RFC 7517 §5); at most 100, each a JSON object. */
function keysOf(jwks: unknown): Record<string, unknown>[] {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  const isObject = (key: unknown) => typeof key === 'object' && key !== null && !Array.isArray(key);
  if (!Array.isArray(keys) || keys.length > 100 || !keys.every(isObject)) {
    throw new TypeError('not a JWKS: expected {"keys": [...]} with at most 100 keys');
  }
  return keys as Record<string, unknown>[];
}

function compatible(jwk: Record<string, unknown>, alg: SigningAlgorithm): boolean {
  if (jwk['alg'] !== undefined && jwk['alg'] !== alg) return false;
  if (jwk['use'] !== undefined && jwk['use'] !== 'sig') return false;
  const ops = jwk['key_ops'];
  if (ops !== undefined && !(Array.isArray(ops) && ops.includes('verify'))) return false;
  // A published private key is an issuer bug; refuse rather than silently use it.
  if (jwk['d'] !== undefined) return false;
  if (alg === 'RS256') return jwk['kty'] === 'RSA';
  if (alg === 'ES256') return jwk['kty'] === 'EC' && jwk['crv'] === 'P-256';
  return false;
}

/** Indexes one JWKS by kid and imports each (kid, alg) key once. */
class KeyIndex {
  private readonly byKid = new Map<string, Record<string, unknown>[]>();
  private readonly imported = new Map<string, Promise<CryptoKey>>();

  constructor(jwks: unknown) {
    for (const jwk of keysOf(jwks)) {
      const kid = jwk['kid'];
      if (typeof kid !== 'string' || kid.length === 0) continue;
      const list = this.byKid.get(kid) ?? [];
      list.push(jwk);
      this.byKid.set(kid, list);
    }
  }

  find(kid: string, alg: SigningAlgorithm): Promise<CryptoKey> | undefined {
    const cacheKey = `${alg} ${kid}`;
    const done = this.imported.get(cacheKey);
    if (done) return done;
    const matches = (this.byKid.get(kid) ?? []).filter((jwk) => compatible(jwk, alg));
    // Two candidates for one kid would make the choice depend on order: refuse both.
    if (matches.length !== 1) return undefined;
    const jwk = { ...matches[0], ext: true } as JWK;
    const key = (importJWK(jwk, alg) as Promise<CryptoKey>).catch((cause: unknown) => {
      this.imported.delete(cacheKey);
      throw new TokenError('kid_unknown', `key ${kid} is unusable`, { cause });
    });
    this.imported.set(cacheKey, key);
    return key;
  }
}

function unknownKid(kid: string): TokenError {
  return new TokenError('kid_unknown', `no ${JSON.stringify(kid.slice(0, 64))} key`);
}

/** A fixed JWKS (tests, benchmarks, or keys distributed out of band). */
export function createLocalKeySet(jwks: { keys: readonly object[] }): KeySource {
  const index = new KeyIndex(jwks);
  return {
    kind: 'jwks',
    async getKey(kid, alg) {
      const key = alg === 'HS256' ? undefined : index.find(kid, alg);
      if (!key) throw unknownKid(kid);
      return key;
    },
  };
}

export interface RemoteKeySetOptions {
  /** Keys older than this are refetched before use, so a removed key stops verifying. Default 10 min. */
  cacheMaxAgeMs?: number;
  /** At most one fetch per this window, however many unknown kids arrive. Default 30 s. */
  cooldownMs?: number;
  timeoutMs?: number;
  /** Largest accepted JWKS document. Default 256 KiB. */
  maxResponseBytes?: number;
  now?: () => number;
  fetch?: typeof fetch;
}

/** An unknown kid refetches at most once per cooldown; a failed refresh keeps the previous keys. */
export function createRemoteKeySet(
  url: string | URL,
  options: RemoteKeySetOptions = {},
): RemoteKeySet {
  const maxAge = options.cacheMaxAgeMs ?? 10 * 60_000;
  const cooldown = Math.min(options.cooldownMs ?? 30_000, maxAge);
  const timeout = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxResponseBytes ?? 256 * 1024;
  const now = options.now ?? Date.now;
  const fetchImpl = options.fetch ?? fetch;
  const target = new URL(url);

  let index: KeyIndex | undefined;
  let loadedAt = 0;
  let attemptedAt = Number.NEGATIVE_INFINITY;
  let inflight: Promise<void> | undefined;

  async function load(): Promise<void> {
    attemptedAt = now();
    const res = await fetchImpl(target, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(timeout),
    });
    if (!res.ok) throw new Error(`JWKS ${target.href} answered ${res.status}`);
    if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
      throw new Error('JWKS response too large');
    }
    const body = await res.text();
    if (body.length > maxBytes) throw new Error('JWKS response too large');
    index = new KeyIndex(JSON.parse(body));
    loadedAt = now();
  }

  function reload(): Promise<void> {
    inflight ??= load().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  /** Reloads when allowed; a failure only matters when there are no keys at all. */
  async function tryReload(): Promise<void> {
    try {
      await reload();
    } catch (cause) {
      if (!index)
        throw new TokenError('jwks_unavailable', 'cannot fetch the issuer JWKS', { cause });
    }
  }

  return {
    kind: 'jwks',
    refresh: reload,
    async getKey(kid, alg) {
      if (alg === 'HS256') throw unknownKid(kid);
      const sinceAttempt = now() - attemptedAt;
      // Never loaded: retry after a short pause rather than a full cooldown.
      if (!index && sinceAttempt >= Math.min(cooldown, 1_000)) await tryReload();
      else if (index && now() - loadedAt >= maxAge && sinceAttempt >= cooldown) await tryReload();
      else if (inflight) await tryReload();
      if (!index) throw new TokenError('jwks_unavailable', 'issuer JWKS not loaded');
      let key = index.find(kid, alg);
      if (!key && now() - attemptedAt >= cooldown) {
        await tryReload();
        key = index.find(kid, alg);
      }
      if (!key) throw unknownKid(kid);
      return key;
    },
  };
}

/** HS256 with a shared secret: only for single-service mode (RFC 7518 §3.2: at least 256 bits). */
export function createSharedSecretKey(
  secret: string | Uint8Array,
  options: { kid?: string } = {},
): KeySource {
  const bytes =
    typeof secret === 'string' ? new TextEncoder().encode(secret) : Uint8Array.from(secret);
  if (bytes.length < 32) throw new RangeError('an HS256 secret needs at least 32 bytes');
  return {
    kind: 'secret',
    async getKey(kid, alg) {
      if (alg !== 'HS256' || (options.kid !== undefined && kid !== options.kid)) {
        throw unknownKid(kid);
      }
      return bytes;
    },
  };
}
