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

/** A `jti` claimed by one INSERT (docs/architecture.md "Provider extensions"). */
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
