import { hash } from 'node:crypto';
import { toJsonb, type Db } from '@portcullis/db';
import type { ClientsRepo } from './clients-repo.js';
import { createOidcAdapterFactory, purgeExpired, type AdapterOptions } from './oidc-adapter.js';
import type { ArtifactGuard } from './oidc-adapter.js';

/** oidc-provider's storage (`oidc_payloads`): the adapter, the replay claim and the purge. */
export interface OidcPayloadsRepo {
  /** The adapter factory oidc-provider calls once per model name. */
  adapterFactory(
    guard: ArtifactGuard | undefined,
    options: AdapterOptions,
  ): ReturnType<typeof createOidcAdapterFactory>;
  /** Claims a JWT's `jti` for `iss` until `exp` with one INSERT: true for exactly one caller. */
  claimJtiOnce(iss: string, jti: string, exp: number): Promise<boolean>;
  /** Deletes expired artifacts (and expired device polls); returns how many artifacts. */
  purgeExpired(now?: Date): Promise<number>;
}

export function createOidcPayloadsRepo(db: Db, clients: ClientsRepo): OidcPayloadsRepo {
  return {
    adapterFactory: (guard, options) => createOidcAdapterFactory(db, clients, guard, options),
    async claimJtiOnce(iss, jti, exp) {
      const id = hash('sha256', `${iss}${jti}`, 'base64url');
      const claimed = await db('oidc_payloads')
        .insert({
          id,
          type: 'ReplayDetection',
          payload: toJsonb({ iss, jti: id }),
          expires_at: new Date(exp * 1000),
        })
        .onConflict(['type', 'id'])
        .merge(['payload', 'expires_at'])
        .where('oidc_payloads.expires_at', '<', new Date())
        .returning('id');
      return claimed.length === 1;
    },
    purgeExpired: (now) => purgeExpired(db, now),
  };
}
