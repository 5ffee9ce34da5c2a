import { decodeJwt } from 'jose';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
import type { OidcPayloadsRepo } from '../data/oidc-payloads-repo.js';
import { replaceReplayDetection } from './internals.js';
import { currentRequest } from '../data/request-memo.js';

/** The `jti` of the request's DPoP proof (RFC 9449 header), which oidc-provider verified first. */
function dpopProofJti(ctx: Partial<KoaContextWithOIDC>): unknown {
  const proof = ctx.get?.('DPoP');
  if (!proof) return undefined;
  try {
    return decodeJwt(proof).jti;
  } catch {
    return undefined;
  }
}

/** A `jti` claimed by one INSERT (docs/architecture.md "Provider extensions"). */
export function claimJtiOnce(
  provider: Provider,
  payloads: Pick<OidcPayloadsRepo, 'claimJtiOnce'>,
): void {
  replaceReplayDetection(provider, async function unique(iss, jti, exp) {
    if (await payloads.claimJtiOnce(iss, jti, exp)) return true;
    const ctx = currentRequest() as Partial<KoaContextWithOIDC> | undefined;
    // RFC 9449 §5 names a replayed proof invalid_dpop_proof; oidc-provider says invalid_grant.
    if (ctx && dpopProofJti(ctx) === jti) {
      throw new errors.InvalidDpopProof('DPoP proof JWT Replay detected');
    }
    return false;
  });
}
