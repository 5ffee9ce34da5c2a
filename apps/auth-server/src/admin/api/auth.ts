import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { AccountsRepo } from '@portcullis/accounts';
import { constantTimeEqual } from '@portcullis/observability';
import type { Middleware } from 'koa';
import { ADMIN_ROLE, CONSOLE_CLIENT_ID } from '../console/client.js';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import { AdminError } from './errors.js';

/** The actor recorded for a request made with ADMIN_TOKEN (no person is known). */
export const ADMIN_TOKEN_ACTOR = 'admin-token';

export interface AdminAuthDeps {
  adminToken: string;
  host: Pick<ProviderHost, 'current'>;
  accounts: Pick<AccountsRepo, 'get'>;
}

/** The acting administrator of the admin request in progress (set by `requireAdmin`). */
export type ActorStore = AsyncLocalStorage<string>;

export const createActorStore = (): ActorStore => new AsyncLocalStorage<string>();

const digest = (s: string) => createHash('sha256').update(s).digest();

/** What oidc-provider's AccessToken.find gives back, as far as it is read here. */
interface StoredAccessToken {
  accountId?: string;
  clientId?: string;
  isExpired: boolean;
  jkt?: string;
  'x5t#S256'?: string;
}

/**
 * `Authorization: Bearer <ADMIN_TOKEN>` (compared as SHA-256 digests in constant time, before any
 * database read), or an access token this server issued to the console for a user holding
 * ADMIN_ROLE, read fresh each request. The request then runs with its actor in `actors`.
 */
export function requireAdmin(deps: AdminAuthDeps, actors: ActorStore): Middleware {
  const expected = digest(deps.adminToken);

  async function consoleActor(token: string): Promise<string> {
    const AccessToken = deps.host.current.AccessToken as unknown as {
      find(value: string): Promise<StoredAccessToken | undefined>;
    };
    const found = await AccessToken.find(token);
    // A sender-constrained token needs its proof, which this API does not check: refused.
    const bound = found?.jkt !== undefined || found?.['x5t#S256'] !== undefined;
    const accountId = found?.accountId;
    if (!found || found.isExpired || found.clientId !== CONSOLE_CLIENT_ID || bound || !accountId) {
      throw new AdminError('invalid_token', 'the token is not valid');
    }
    const user = await deps.accounts.get(accountId);
    if (!user || user.disabledAt || !user.roles.includes(ADMIN_ROLE)) {
      throw new AdminError('forbidden', 'the administrator role is required');
    }
    return user.id;
  }

  return async function adminAuth(ctx, next) {
    const authorization = ctx.get('authorization');
    if (authorization === '') {
      throw new AdminError('unauthenticated', 'send Authorization: Bearer <ADMIN_TOKEN>');
    }
    const match = /^Bearer ([^\s]+)$/.exec(authorization);
    if (!match) throw new AdminError('invalid_token', 'the token is not valid');
    const token = match[1]!;
    const actor = constantTimeEqual(expected, digest(token))
      ? ADMIN_TOKEN_ACTOR
      : await consoleActor(token);
    await actors.run(actor, next);
  };
}

/** The audit trail with the request's actor added to each entry (one place for every route). */
export function auditWithActor(audit: AuditRepo, actors: ActorStore): AuditRepo {
  return {
    ...audit,
    record: (event) => audit.record({ ...event, actor: event.actor ?? actors.getStore() ?? null }),
  };
}
