import type Router from '@koa/router';
import type { AccountsRepo } from '@portcullis/accounts';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { MfaCore } from '../../identity/mfa/index.js';
import type { EndCredentials } from '../../identity/self-service/end-credentials.js';
import { AdminError } from './errors.js';

export interface FactorAdminDeps {
  accounts: AccountsRepo;
  audit: AuditRepo;
  mfa: MfaCore;
  /** A factor removed ends what a recovery ends (identity/self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
}

/** A user's second factors: GET lists every kind, DELETE removes them all (`mfa_reset` audit). */
export function factorRoutes(router: Router, deps: FactorAdminDeps): void {
  async function userOf(id: string) {
    const user = await deps.accounts.get(id);
    if (!user) throw new AdminError('not_found', 'no such user');
    return user;
  }

  router.get('/admin/users/:id/factors', async function listFactors(ctx) {
    const user = await userOf(ctx.params['id']!);
    const [factors, left] = await Promise.all([
      deps.mfa.factors.factorsOf(user.id),
      deps.mfa.repo.countRecoveryCodes(user.id),
    ]);
    ctx.body = {
      items: factors.map((f) => ({
        kind: f.kind,
        id: f.id,
        name: f.name,
        created_at: f.createdAt,
        last_used_at: f.lastUsedAt,
      })),
      recovery_codes_remaining: left,
    };
  });

  router.delete('/admin/users/:id/factors', async function resetFactors(ctx) {
    const user = await userOf(ctx.params['id']!);
    const removed = await deps.mfa.factors.removeAll(user.id);
    const recoveryCodes = await deps.mfa.repo.deleteRecoveryCodes(user.id);
    // An enrolment in progress is no factor yet, but goes too.
    await deps.mfa.repo.deleteTotp(user.id);
    await deps.endCredentials(user.id);
    await deps.audit.record({
      kind: 'mfa_reset',
      subject: user.id,
      detail: { removed, recovery_codes: recoveryCodes },
    });
    ctx.body = { removed, recovery_codes_removed: recoveryCodes };
  });
}
