import { toJsonb, type Db } from '@portcullis/db';
import { EX_CONFIG, StartupError } from '@portcullis/observability';
import { open, seal, SealedFormatError } from '../kernel/sealed.js';

export type KeyAlg = 'RS256' | 'ES256';
export type Jwk = Record<string, unknown> & { kid: string };

export interface SigningKey {
  kid: string;
  alg: KeyAlg;
  publicJwk: Jwk;
  privateJwk: Jwk;
  createdAt: Date;
  /** Signs from this time on (publish before sign); published from `createdAt`. */
  activatesAt: Date;
  /** Stops signing at this time (may be in the future: the successor's activation). */
  retiredAt: Date | null;
  /** Dropped from the JWKS at this time. */
  expiresAt: Date | null;
}

export type PublicSigningKey = Omit<SigningKey, 'privateJwk'>;

interface KeyRow {
  kid: string;
  alg: KeyAlg;
  public_jwk: Jwk;
  private_jwk_enc: string;
  created_at: Date;
  activates_at: Date;
  retired_at: Date | null;
  expires_at: Date | null;
}

/** Sealed with the key id as context (sealed.ts), so a ciphertext cannot move to another row. */
export function sealJwk(kek: Buffer, kid: string, jwk: Jwk): string {
  return seal(kek, kid, JSON.stringify(jwk));
}

/** A stored key does not open with this KEY_ENCRYPTION_KEY; at startup it exits 78 (EX_CONFIG). */
export class KeyDecryptionError extends StartupError {
  override name = 'KeyDecryptionError';
  constructor(kid: string, cause: unknown) {
    super(
      `signing key ${kid} in the database cannot be decrypted with this KEY_ENCRYPTION_KEY: ` +
        'the keys were encrypted with another one. Set KEY_ENCRYPTION_KEY to the key that ' +
        'encrypted them (a development run generates it into DATA_DIR/key-encryption-key: ' +
        'use the DATA_DIR of that run), or start on an empty database',
      EX_CONFIG,
      { cause },
    );
  }
}

export function openJwk(kek: Buffer, kid: string, sealed: string): Jwk {
  let clear: string;
  try {
    clear = open(kek, kid, sealed);
  } catch (error) {
    if (error instanceof SealedFormatError) throw new Error(`signing key ${kid}: unknown format`);
    // GCM authentication failed: another key (or a tampered row, which the same fix suits).
    throw new KeyDecryptionError(kid, error);
  }
  return JSON.parse(clear) as Jwk;
}

export type NewSigningKey = Pick<SigningKey, 'kid' | 'alg' | 'publicJwk' | 'privateJwk'>;

export interface SigningKeysRepo {
  /** Keys not yet past `expires_at`, newest first. */
  listUsable(now?: Date): Promise<SigningKey[]>;
  listPublic(): Promise<PublicSigningKey[]>;
  /** Inserts `key` and retires its alg's keys at `activatesAt`, in one transaction. */
  addAndRetire(key: NewSigningKey, activatesAt: Date, retireUntil: Date): Promise<void>;
  /**
   * Drops a key that does not sign at `at` (not yet active, or retired) from the JWKS at `at`;
   * the keys a dropped `next` key was to replace keep signing as long as it would have.
   * False when the key signs at `at`, is dropped already, or does not exist.
   */
  expire(kid: string, at: Date): Promise<boolean>;
}

export function createSigningKeysRepo(db: Db, kek: Buffer): SigningKeysRepo {
  const toPublic = (r: KeyRow): PublicSigningKey => ({
    kid: r.kid,
    alg: r.alg,
    publicJwk: r.public_jwk,
    createdAt: r.created_at,
    activatesAt: r.activates_at,
    retiredAt: r.retired_at,
    expiresAt: r.expires_at,
  });
  return {
    async listUsable(now = new Date()) {
      const rows = await db<KeyRow>('signing_keys')
        .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
        .orderBy('created_at', 'desc')
        .orderBy('kid');
      return rows.map((r) => ({
        ...toPublic(r),
        privateJwk: openJwk(kek, r.kid, r.private_jwk_enc),
      }));
    },
    async listPublic() {
      return (await db<KeyRow>('signing_keys').orderBy('created_at', 'desc').orderBy('kid')).map(
        toPublic,
      );
    },
    async addAndRetire(key, activatesAt, retireUntil) {
      await db.transaction(async (trx) => {
        await trx('signing_keys')
          .where({ alg: key.alg })
          .andWhere((q) => q.whereNull('retired_at').orWhere('retired_at', '>', activatesAt))
          .update({ retired_at: activatesAt, expires_at: retireUntil });
        await trx('signing_keys').insert({
          kid: key.kid,
          alg: key.alg,
          public_jwk: toJsonb(key.publicJwk),
          private_jwk_enc: sealJwk(kek, key.kid, key.privateJwk),
          activates_at: activatesAt,
        });
      });
    },
    async expire(kid, at) {
      return db.transaction(async (trx) => {
        const key = await trx<KeyRow>('signing_keys').where({ kid }).forUpdate().first();
        if (!key || (key.expires_at && key.expires_at <= at)) return false;
        const next = key.activates_at > at;
        const retired = key.retired_at !== null && key.retired_at <= at;
        if (!next && !retired) return false;
        if (next) {
          // addAndRetire retired them at this key's activation: they take over its schedule.
          await trx('signing_keys')
            .where({ alg: key.alg, retired_at: key.activates_at })
            .whereNot({ kid })
            .update({
              retired_at: key.retired_at,
              expires_at: key.retired_at ? key.expires_at : null,
            });
        }
        await trx('signing_keys')
          .where({ kid })
          .update({ retired_at: retired ? key.retired_at : at, expires_at: at });
        return true;
      });
    },
  };
}
