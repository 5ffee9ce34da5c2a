import type { AccountsRepo } from '@portcullis/accounts';
import {
  ACR,
  permissionsForRoles,
  type DenyList,
  TokenError,
  type Principal,
  type PrincipalResolver,
  type RoleSource,
} from '@portcullis/claims';
import { AmbiguousCredentialsError } from '../errors.js';
import type { SessionsRepo } from '../data/sessions-repo.js';
import { SECRET_BODY } from './secrets.js';

export const SESSION_COOKIE = 'sid';
/** last_seen_at moves at most this often, so a busy session costs no write per request. */
export const SESSION_TOUCH_MS = 60_000;

/** BOTH an Authorization header and a `sid` cookie: refused (400), which is meant is not guessed. */
export function createMixedCredentialsGuard(): PrincipalResolver {
  return async function refuseMixedCredentials(input) {
    if (input.authorization && input.cookies?.get(SESSION_COOKIE) !== undefined) {
      throw new AmbiguousCredentialsError();
    }
    return undefined;
  };
}

export interface SessionResolverDeps {
  sessions: Pick<SessionsRepo, 'findActive' | 'touch'>;
  accounts: Pick<AccountsRepo, 'findById'>;
  clock: () => Date;
  idleTimeoutSec: number;
  /** The roles' permissions on this API. */
  roles: RoleSource;
  /** A `subject` revocation (a reset, logout everywhere) ends sessions begun before it. */
  denyList: Pick<DenyList, 'isDenied'>;
}

/** `sid` cookie -> Principal; roles read at each lookup, so a role change applies at once. */
export function createSessionResolver(deps: SessionResolverDeps): PrincipalResolver {
  return async function resolveSessionPrincipal(input) {
    const sid = input.cookies?.get(SESSION_COOKIE);
    if (sid === undefined) return undefined;
    if (!SECRET_BODY.test(sid)) throw new TokenError('token_malformed', 'malformed session cookie');
    const now = deps.clock();
    const session = await deps.sessions.findActive(
      sid,
      now,
      new Date(now.getTime() - deps.idleTimeoutSec * 1000),
    );
    if (!session) throw new TokenError('token_expired', 'unknown, ended or expired session');
    // Read from memory on every request: holds on each instance within the deny list's poll.
    if (deps.denyList.isDenied({ sub: session.userId, iat: session.createdAt.getTime() / 1000 }))
      throw new TokenError('token_revoked', 'the session was ended by a logout everywhere');
    const user = await deps.accounts.findById(session.userId);
    if (!user) throw new TokenError('token_revoked', 'the session user no longer exists');
    const staleBefore = new Date(now.getTime() - SESSION_TOUCH_MS);
    if (session.lastSeenAt < staleBefore) await deps.sessions.touch(sid, now, staleBefore);
    const principal: Principal = {
      subject: user.id,
      kind: 'user',
      roles: [...user.roles],
      permissions: permissionsForRoles(user.roles, deps.roles),
      scope: [],
      authMethod: 'session',
      // As an API key's id: a logout names it to the deny list, which ends its streams.
      tokenId: session.id,
      email: user.email,
      expiresAt: Math.floor(session.expiresAt.getTime() / 1000),
      // POST /login takes a password alone: a session never meets a stricter step-up rule.
      acr: ACR.password,
      amr: ['pwd'],
      authTime: Math.floor(session.createdAt.getTime() / 1000),
    };
    return principal;
  };
}
