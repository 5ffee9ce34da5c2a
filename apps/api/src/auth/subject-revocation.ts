import type { SharedDenyList } from '@portcullis/db';
import type { Logger } from 'pino';
import type { SessionsRepo } from '../data/sessions-repo.js';

/**
 * A `subject` revocation learnt (by the poll, or in this process before its row is even written)
 * marks the user's `sid` sessions begun before it as ended, read from the deny list in memory.
 * The session resolver refuses them anyway; this keeps `revoked_at` true for lists and purges.
 */
export function endSessionsOnSubjectRevocation(
  denyList: Pick<SharedDenyList, 'isDenied'> & Partial<Pick<SharedDenyList, 'onRevocation'>>,
  deps: { sessions: Pick<SessionsRepo, 'revokeWhere'>; logger: Logger; now: () => number },
): (() => void) | undefined {
  return denyList.onRevocation?.((revocation) => {
    if (revocation.kind !== 'subject') return;
    const sub = revocation.value;
    deps.sessions
      .revokeWhere(
        sub,
        (at) => denyList.isDenied({ sub, iat: at.getTime() / 1000 }),
        new Date(deps.now()),
      )
      .catch((err: unknown) => deps.logger.error({ err }, 'ending sessions of a revoked subject'));
  });
}
