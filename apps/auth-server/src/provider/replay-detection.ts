import { hash } from 'node:crypto';
import { toJsonb, type Db } from '@portcullis/db';
import type Provider from 'oidc-provider';

interface ReplayDetectionModel {
  unique(iss: string, jti: string, exp: number): Promise<boolean>;
}

/**
 * oidc-provider remembers a used `jti` (client assertions, DPoP proofs) by reading the
 * ReplayDetection row and then saving it: two requests carrying the same JWT at once,
 * at one instance or two, both read nothing and both pass. Here the row is claimed by
 * one INSERT: exactly one request wins, whichever instance it reaches (README
 * "private_key_jwt"). An expired row of the same id is taken over.
 */
export function claimJtiOnce(provider: Provider, db: Db): void {
  const model = provider.ReplayDetection as unknown as ReplayDetectionModel;
  model.unique = async function unique(iss, jti, exp) {
    const id = hash('sha256', `${iss}${jti}`, 'base64url');
    const now = new Date();
    const claimed = await db('oidc_payloads')
      .insert({
        id,
        type: 'ReplayDetection',
        payload: toJsonb({ iss, jti: id }),
        expires_at: new Date(exp * 1000),
      })
      .onConflict(['type', 'id'])
      .merge(['payload', 'expires_at'])
      .where('oidc_payloads.expires_at', '<', now)
      .returning('id');
    return claimed.length === 1;
  };
}
