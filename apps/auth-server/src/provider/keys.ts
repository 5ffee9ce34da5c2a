import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { Jwk, KeyAlg, SigningKey, SigningKeysRepo } from '../data/signing-keys-repo.js';

/** The keys one Provider instance is built with. */
export interface KeyRing {
  /** Private JWKs for oidc-provider: the newest key of each alg first, so it signs. */
  readonly jwks: Jwk[];
  /** The newest active key: it signs access tokens. */
  readonly current: { kid: string; alg: KeyAlg };
  /** Changes whenever the set of published keys changes (triggers a Provider rebuild). */
  readonly fingerprint: string;
}

export interface KeyManager {
  /** Loads the usable keys, creating the first key of `defaultAlg` when there is none. */
  load(): Promise<KeyRing>;
  /** Adds a key of `alg`; it signs from now on. Older keys of that alg stay published. */
  rotate(alg: KeyAlg): Promise<{ kid: string; alg: KeyAlg }>;
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

function ringOf(keys: SigningKey[]): KeyRing {
  // keys arrive newest first; the newest not-yet-retired key signs.
  const active = keys.find((k) => !k.retiredAt) ?? keys[0]!;
  const ordered = [...keys].sort((a, b) => Number(!!a.retiredAt) - Number(!!b.retiredAt));
  return {
    jwks: ordered.map((k) => k.privateJwk),
    current: { kid: active.kid, alg: active.alg },
    fingerprint: ordered.map((k) => `${k.kid}:${k.retiredAt ? 'r' : 'a'}`).join(','),
  };
}

/**
 * Signing keys live in `signing_keys`, encrypted at rest. Rotation never breaks issued
 * tokens: a replaced key stays in the JWKS for `retentionSeconds` (the longest token
 * lifetime plus a margin) before it is dropped.
 */
export function createKeyManager(
  repo: SigningKeysRepo,
  options: { defaultAlg: KeyAlg; retentionSeconds: number },
): KeyManager {
  async function rotate(alg: KeyAlg) {
    const key = await generate(alg);
    await repo.addAndRetire(
      { ...key, alg },
      new Date(Date.now() + options.retentionSeconds * 1000),
    );
    return { kid: key.kid, alg };
  }
  return {
    rotate,
    async load() {
      let keys = await repo.listUsable();
      if (!keys.some((k) => !k.retiredAt)) {
        await rotate(options.defaultAlg);
        keys = await repo.listUsable();
      }
      return ringOf(keys);
    },
  };
}
