import type { AsyncLocalStorage } from 'node:async_hooks';
import { hash } from 'node:crypto';
import { toJsonb, type Db } from '@portcullis/db';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
// The request a replay check runs in, and the DPoP proof oidc-provider verified for it.
// @ts-expect-error: an internal module without type declarations.
import als from 'oidc-provider/lib/helpers/als.js';
// @ts-expect-error: an internal module without type declarations.
import { getDpopJwt } from 'oidc-provider/lib/helpers/validate_dpop.js';

interface ReplayDetectionModel {
  unique(iss: string, jti: string, exp: number): Promise<boolean>;
}

const requests = als as AsyncLocalStorage<KoaContextWithOIDC>;
const dpopProofOf = getDpopJwt as (
  provider: Provider,
  ctx: KoaContextWithOIDC,
) => { payload: { jti?: unknown } } | undefined;

/**
 * oidc-provider remembers a used `jti` (client assertions, DPoP proofs) by reading the
 * ReplayDetection row and then saving it: two requests carrying the same JWT at once,
 * at one instance or two, both read nothing and both pass. Here the row is claimed by
 * one INSERT: exactly one request wins, whichever instance it reaches (README
 * "private_key_jwt"). An expired row of the same id is taken over.
 *
 * A replayed DPoP proof is `invalid_dpop_proof` (RFC 9449 §5), where oidc-provider's
 * grants would answer `invalid_grant`; a replayed client assertion keeps its own error.
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
    if (claimed.length === 1) return true;
    const ctx = requests.getStore();
    if (ctx && dpopProofOf(provider, ctx)?.payload.jti === jti) {
      throw new errors.InvalidDpopProof('DPoP proof JWT Replay detected');
    }
    return false;
  };
}
