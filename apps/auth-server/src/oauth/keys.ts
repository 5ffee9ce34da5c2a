import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { Jwk, KeyAlg, SigningKey, SigningKeysRepo } from '../data/signing-keys-repo.js';
import { FAPI_ALGS } from './fapi.js';

/** A key's state: `next` published, `active` signs, `retired` still published, `expired` gone. */
export type KeyState = 'next' | 'active' | 'retired' | 'expired';

type KeyTimes = Pick<SigningKey, 'activatesAt' | 'retiredAt' | 'expiresAt'>;

export function keyState(key: KeyTimes, now: number): KeyState {
  if (key.expiresAt && key.expiresAt.getTime() <= now) return 'expired';
  if (key.retiredAt && key.retiredAt.getTime() <= now) return 'retired';
  if (key.activatesAt.getTime() > now) return 'next';
  return 'active';
}

/** What a key signs (docs/security.md "Signing keys"). */
export type SignedToken = 'access_token' | 'fapi_access_token' | 'id_token';

/** The keys one Provider instance is built with. */
export interface KeyRing {
  /** Private JWKs: each alg's signing key first; the rest `key_ops: ["verify"]`, never signing. */
  readonly jwks: Jwk[];
  /** The newest active key: it signs access tokens. */
  readonly current: { kid: string; alg: KeyAlg };
  /** What each key signs; a key absent from it signs nothing (verify-only). */
  readonly signs: ReadonlyMap<string, readonly SignedToken[]>;
  /** Each published key and its state when the ring was built. */
  readonly states: ReadonlyMap<string, KeyState>;
  /** Milliseconds time of the next scheduled state change (activation, retirement, expiry). */
  readonly nextChangeAt: number | undefined;
  /** Changes whenever a key's state changes (triggers a Provider rebuild). */
  readonly fingerprint: string;
}

/** Whether the ring has an active key that signs ID tokens of `alg`. */
export function signsIdTokensWith(ring: KeyRing, alg: string): boolean {
  return ring.jwks.some(
    (k) => k.alg === alg && ring.signs.get(String(k.kid))?.includes('id_token'),
  );
}

/** The key for a client's access tokens; for a client held to `algs` (FAPI 2.0), one of those. */
export function accessTokenSigner(
  ring: KeyRing,
  algs?: readonly string[],
): KeyRing['current'] | undefined {
  if (!algs || algs.includes(ring.current.alg)) return ring.current;
  const jwk = ring.jwks.find((k) => algs.includes(String(k.alg)) && ring.signs.has(String(k.kid)));
  return jwk && { kid: String(jwk.kid), alg: jwk.alg as KeyAlg };
}

export interface RotateOptions {
  /** `now` signs at once (emergency); default: after the publish lead. */
  activate?: 'now' | 'scheduled';
}

export interface RotatedKey {
  kid: string;
  alg: KeyAlg;
  activatesAt: Date;
}

export interface KeyManager {
  /** Loads the published keys, creating an active key of `defaultAlg` when none signs. */
  load(): Promise<KeyRing>;
  /** Adds a key of `alg`, signing after the publish lead (or now); the one it replaces retires. */
  rotate(alg: KeyAlg, options?: RotateOptions): Promise<RotatedKey>;
}

async function generate(alg: KeyAlg): Promise<{ kid: string; publicJwk: Jwk; privateJwk: Jwk }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const pub = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(pub);
  const common = { kid, alg, use: 'sig' };
  return {
    kid,
    publicJwk: { ...pub, ...common },
    privateJwk: { ...(await exportJWK(privateKey)), ...common },
  };
}

const newest = (a: SigningKey, b: SigningKey) =>
  b.activatesAt.getTime() - a.activatesAt.getTime() ||
  b.createdAt.getTime() - a.createdAt.getTime();

/** What the signing key at `index` (newest first) signs; `fapiSigner`: newest ES256/PS256 key. */
function signedBy(index: number, fapiSigner: number): SignedToken[] {
  if (index === 0) return ['access_token', 'id_token'];
  if (index === fapiSigner) return ['fapi_access_token', 'id_token'];
  return ['id_token'];
}

/** The ring at `now`, or undefined when no key is active. Exported for unit tests. */
export function ringOf(keys: SigningKey[], now: number): KeyRing | undefined {
  const published = keys.filter((k) => keyState(k, now) !== 'expired');
  const active = published.filter((k) => keyState(k, now) === 'active').sort(newest);
  if (active.length === 0) return undefined;
  // One signing key per alg (ID tokens are signed with the client's alg): its newest active.
  const signing: SigningKey[] = [];
  for (const k of active) if (!signing.some((s) => s.alg === k.alg)) signing.push(k);
  const others = published.filter((k) => !signing.includes(k)).sort(newest);
  const fapiSigner = signing.findIndex((k) => FAPI_ALGS.includes(k.alg));
  const states = new Map(published.map((k) => [k.kid, keyState(k, now)] as const));
  const times = published
    .flatMap((k) => [k.activatesAt, k.retiredAt, k.expiresAt])
    .map((d) => d?.getTime() ?? Number.POSITIVE_INFINITY)
    .filter((t) => t > now && Number.isFinite(t));
  return {
    jwks: [
      ...signing.map((k) => k.privateJwk),
      ...others.map((k) => ({ ...k.privateJwk, key_ops: ['verify'] })),
    ],
    current: { kid: signing[0]!.kid, alg: signing[0]!.alg },
    signs: new Map(signing.map((k, i) => [k.kid, signedBy(i, fapiSigner)])),
    states,
    nextChangeAt: times.length ? Math.min(...times) : undefined,
    fingerprint: [...signing, ...others].map((k) => `${k.kid}:${states.get(k.kid)}`).join(','),
  };
}

export interface KeyManagerOptions {
  defaultAlg: KeyAlg;
  /** Seconds a replaced key stays published after it stops signing. */
  retentionSeconds: number;
  /** Seconds between publishing a new key and signing with it. */
  publishLeadSeconds: number;
  /** Milliseconds clock; tests freeze it. */
  now?: () => number;
}

/** Signing keys, encrypted at rest, published before signing (docs/security.md "Signing keys"). */
export function createKeyManager(repo: SigningKeysRepo, options: KeyManagerOptions): KeyManager {
  const now = options.now ?? Date.now;
  async function rotate(alg: KeyAlg, rotateOptions: RotateOptions = {}): Promise<RotatedKey> {
    const key = await generate(alg);
    const lead = rotateOptions.activate === 'now' ? 0 : options.publishLeadSeconds;
    const activatesAt = new Date(now() + lead * 1000);
    const retireUntil = new Date(activatesAt.getTime() + options.retentionSeconds * 1000);
    await repo.addAndRetire({ ...key, alg }, activatesAt, retireUntil);
    return { kid: key.kid, alg, activatesAt };
  }
  return {
    rotate,
    async load() {
      const ring = ringOf(await repo.listUsable(new Date(now())), now());
      if (ring) return ring;
      // First start (or every key retired): nothing could be signed, so no lead.
      await rotate(options.defaultAlg, { activate: 'now' });
      const created = ringOf(await repo.listUsable(new Date(now())), now());
      if (!created) throw new Error('no active signing key after creating one');
      return created;
    },
  };
}
