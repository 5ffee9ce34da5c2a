import type { AsyncLocalStorage } from 'node:async_hooks';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
import type { OidcPayloadsRepo } from '../data/oidc-payloads-repo.js';
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
export function claimJtiOnce(
  provider: Provider,
  payloads: Pick<OidcPayloadsRepo, 'claimJtiOnce'>,
): void {
  const model = provider.ReplayDetection as unknown as ReplayDetectionModel;
  model.unique = async function unique(iss, jti, exp) {
    if (await payloads.claimJtiOnce(iss, jti, exp)) return true;
    const ctx = requests.getStore();
    if (ctx && dpopProofOf(provider, ctx)?.payload.jti === jti) {
      throw new errors.InvalidDpopProof('DPoP proof JWT Replay detected');
    }
    return false;
  };
}
