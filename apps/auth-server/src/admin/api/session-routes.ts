import type Router from '@koa/router';
import type { AccountsRepo } from '@portcullis/accounts';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { UserSessionsRepo } from '../../data/user-sessions-repo.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import type { EndCredentials } from '../../identity/self-service/end-credentials.js';
import { AdminError } from './errors.js';

export interface SessionAdminDeps {
  accounts: AccountsRepo;
  audit: AuditRepo;
  host: ProviderHost;
  userSessions: UserSessionsRepo;
  /** Ending all sessions ends what a reset does (identity/self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
}

/** A user's sessions and grants: listed, all ended (logout everywhere) or one ended or revoked; audited. */
export function sessionRoutes(router: Router, deps: SessionAdminDeps): void {
  async function userOf(id: string) {
    const user = await deps.accounts.get(id);
    if (!user) throw new AdminError('not_found', 'no such user');
    return user;
  }

  router.get('/admin/users/:id/sessions', async function listSessions(ctx) {
    const user = await userOf(ctx.params['id']!);
    const [sessions, grants] = await Promise.all([
      deps.userSessions.sessions(user.id),
      deps.userSessions.grants(user.id),
    ]);
    ctx.body = {
      items: sessions.map((s) => ({
        id: s.uid,
        signed_in_at: s.signedInAt,
        expires_at: s.expiresAt,
        amr: s.amr,
        clients: s.clientIds,
      })),
      grants: grants.map((g) => ({
        id: g.id,
        client_id: g.clientId,
        scopes: g.scopes,
        created_at: g.createdAt,
        expires_at: g.expiresAt,
      })),
    };
  });

  router.delete('/admin/users/:id/sessions', async function endAllSessions(ctx) {
    const user = await userOf(ctx.params['id']!);
    await deps.endCredentials(user.id);
    await deps.audit.record({ kind: 'sessions_ended', subject: user.id, detail: { by: 'admin' } });
    ctx.status = 204;
  });

  // As the account page's "revoke": the grant and every token of it go.
  router.delete('/admin/users/:id/grants/:grantId', async function revokeGrant(ctx) {
    const user = await userOf(ctx.params['id']!);
    const grantId = ctx.params['grantId']!;
    if (!(await deps.userSessions.revokeGrant(user.id, grantId))) {
      throw new AdminError('not_found', 'no such grant of this user');
    }
    deps.host.current.emit('grant.revoked', undefined, grantId);
    await deps.audit.record({
      kind: 'grant_revoked',
      subject: user.id,
      grantId,
      detail: { by: 'admin' },
    });
    ctx.status = 204;
  });

  router.delete('/admin/users/:id/sessions/:sessionId', async function endSession(ctx) {
    const user = await userOf(ctx.params['id']!);
    const uid = ctx.params['sessionId']!;
    const ended = await deps.userSessions.endSession(user.id, uid);
    if (!ended) throw new AdminError('not_found', 'no such session of this user');
    // As oidc-provider announces a revocation: the deny list stops the grants' access tokens.
    for (const grantId of ended.grantIds)
      deps.host.current.emit('grant.revoked', undefined, grantId);
    await deps.audit.record({
      kind: 'session_ended',
      subject: user.id,
      detail: { session: uid, by: 'admin', grants: ended.grantIds.length },
    });
    ctx.status = 204;
  });
}
