import { predatesLogout } from '@portcullis/claims';
import type { SharedDenyList } from '@portcullis/db';
import type { AdapterPayload } from 'oidc-provider';

/**
 * The artifact's subject revocations as read in the statement that read the artifact
 * (`before` of each row; none: empty). That statement started after the request, so
 * it is as fresh as a new poll of the deny list.
 */
export interface FreshRevocations {
  subjectRevokedBefore: number[];
}

/**
 * Decides whether a stored artifact was cut off by a logout everywhere. `issuedAt` is when
 * it was issued (a session: signed in; a refresh token: its grant created), Unix seconds
 * with milliseconds, from its row; undefined for rows from before it was recorded.
 */
export type ArtifactGuard = (
  model: string,
  payload: AdapterPayload,
  issuedAt: number | undefined,
  fresh?: FreshRevocations,
) => Promise<boolean>;

/**
 * Artifacts that mint tokens. For these the guard does not trust the last 250 ms poll: a
 * logout everywhere written by any API instance must stop the very next refresh on every
 * auth-server instance. Refresh tokens and codes come with their subject's revocations
 * read in the same statement (the adapter); for the others the deny list polls first.
 */
const TOKEN_MINTING = new Set(['RefreshToken', 'AuthorizationCode', 'DeviceCode']);

/**
 * Logout everywhere reaches the authorization server. The API's `POST /logout/all`
 * writes a `subject` revocation (packages/claims deny list: user id, issued_before).
 * Every artifact of that user issued before that instant — session, grant, code,
 * device code, opaque access token and refresh token — then counts as gone: the adapter
 * answers "not found", so /token refuses the refresh with invalid_grant and /authorize
 * asks the user to sign in again. The adapter also deletes the grant (or session), so
 * the refusal outlives the revocation row. A refresh-token chain counts from its grant's
 * creation (else `iiat`, its first issue), so a rotation racing the logout cannot launder
 * an old grant. Issue times are compared in milliseconds where the row has them, so a
 * sign-in finished just after the logout, in the same second, is not cut off; the payload's
 * whole seconds are the fallback, and then the same second counts as before.
 *
 * Reads the in-memory deny list (polled every 250 ms; same-process writes at once), and
 * for token-minting artifacts also the revocations read with the artifact, or, when the
 * artifact came without them, a poll made after the call.
 */
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
