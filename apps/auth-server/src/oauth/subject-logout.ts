import { predatesLogout } from '@portcullis/claims';
import type { SharedDenyList } from '@portcullis/db';
import type { ArtifactGuard } from '../data/oidc-adapter.js';
import { REFRESH_TOKEN_TTL } from './lifetimes.js';

/** Artifacts that mint tokens: the guard does not trust the last poll for these. */
const TOKEN_MINTING = new Set(['RefreshToken', 'AuthorizationCode', 'DeviceCode']);

/** Logout everywhere here (docs/security.md "Logout everywhere, to the millisecond"). */
export function createLogoutGuard(
  denyList: Pick<SharedDenyList, 'isDenied' | 'sync'>,
): ArtifactGuard {
  return async function loggedOutEverywhere(model, payload, issuedAt, fresh) {
    const sub = payload.accountId;
    if (typeof sub !== 'string' || sub === '') return false;
    let iat = issuedAt;
    if (iat !== undefined) {
      // Known to the millisecond.
    } else if (model === 'Session') iat = payload.loginTs;
    else if (model === 'RefreshToken') iat = (payload['iiat'] as number | undefined) ?? payload.iat;
    else iat = payload.iat;
    if (fresh) {
      if (fresh.subjectRevokedBefore.some((before) => predatesLogout(iat, before))) return true;
    } else if (TOKEN_MINTING.has(model)) await denyList.sync({ fresh: true });
    // Same-process revocations and the last poll, in every case.
    return denyList.isDenied({ sub, iat });
  };
}

/** Ends every session and token of a user issued until now (a new password, a disabled account). */
export type LogoutEverywhere = (userId: string) => Promise<void>;

export function createLogoutEverywhere(
  denyList: Pick<SharedDenyList, 'denySubject'>,
  now: () => number = Date.now,
): LogoutEverywhere {
  return async function logoutEverywhere(userId) {
    const at = now() / 1000;
    // The row outlives every artifact it cuts off.
    await denyList.denySubject(userId, at, Math.ceil(at) + REFRESH_TOKEN_TTL);
  };
}
