import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type { AccountsRepo, User } from '@portcullis/accounts';
import type { RoleStore, SharedDenyList } from '@portcullis/db';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { MfaCore } from '../../identity/mfa/index.js';
import type { EndCredentials } from '../../identity/self-service/end-credentials.js';
import { createLogoutEverywhere } from '../../oauth/subject-logout.js';
import { AdminError } from './errors.js';
import { parseWithRoles } from './role-routes.js';
import { parse, userView } from './parse.js';
import { passwordResetSchema, userPatchSchema } from './schemas.js';

export interface UserAdminDeps {
  accounts: AccountsRepo;
  audit: AuditRepo;
  /** Disabling and a new password end what a recovery ends (identity/self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
  /** A user's roles are roles of the `roles` table (role-routes.ts). */
  roles: Pick<RoleStore, 'unknown'>;
  /** A role taken away ends the tokens that carry it (docs/roles.md). */
  denyList: Pick<SharedDenyList, 'denySubject'>;
  /** GET /admin/users/:id names the kinds of the user's second factors. */
  mfa: Pick<MfaCore, 'factors'>;
  /** Milliseconds clock; default Date.now. */
  now?: () => number;
  /** Mails a new verification link (identity/self-service/signup-mail.ts). */
  resendVerification?: ((userId: string) => Promise<'sent' | 'verified' | 'not_found'>) | undefined;
}

/**
 * Changes to an account (README "Admin API"), each audited
 * (docs/security.md "Disabled accounts and password resets").
 */
export function userRoutes(router: Router, deps: UserAdminDeps): void {
  const now = deps.now ?? Date.now;
  const logoutEverywhere = createLogoutEverywhere(deps.denyList);

  async function found(user: Promise<User | undefined>): Promise<User> {
    const u = await user;
    if (!u) throw new AdminError('not_found', 'no such user');
    return u;
  }

  router.get('/admin/users/:id', async function getUser(ctx) {
    const user = await found(deps.accounts.get(ctx.params['id']!));
    const factors = await deps.mfa.factors.factorsOf(user.id);
    ctx.body = { ...userView(user), factors: [...new Set(factors.map((f) => f.kind))] };
  });

  router.patch('/admin/users/:id', async function changeRoles(ctx) {
    const { roles } = await parseWithRoles(userPatchSchema, ctx.request.body, deps.roles);
    const before = await found(deps.accounts.get(ctx.params['id']!));
    const user = await found(deps.accounts.setRoles(before.id, roles));
    // Tokens name roles, so one taken away would ride in them until they expire.
    const dropped = before.roles.some((r) => !user.roles.includes(r));
    if (dropped) await logoutEverywhere(user.id);
    await deps.audit.record({
      kind: 'user_roles_changed',
      subject: user.id,
      detail: { from: before.roles, to: user.roles, ...(dropped ? { tokensEnded: true } : {}) },
    });
    ctx.body = userView(user);
  });

  router.post('/admin/users/:id/disable', async function disableUser(ctx) {
    const user = await found(deps.accounts.setDisabled(ctx.params['id']!, new Date(now())));
    await deps.endCredentials(user.id);
    await deps.audit.record({ kind: 'user_disabled', subject: user.id });
    ctx.body = userView(user);
  });

  router.post('/admin/users/:id/enable', async function enableUser(ctx) {
    const user = await found(deps.accounts.setDisabled(ctx.params['id']!, null));
    await deps.audit.record({ kind: 'user_enabled', subject: user.id });
    ctx.body = userView(user);
  });

  router.post('/admin/users/:id/password', async function resetPassword(ctx) {
    const body = parse(passwordResetSchema, ctx.request.body);
    const password = body.password ?? randomBytes(18).toString('base64url');
    const user = await found(deps.accounts.setPassword(ctx.params['id']!, password));
    await deps.endCredentials(user.id);
    await deps.audit.record({
      kind: 'password_reset',
      subject: user.id,
      detail: { generated: body.generate === true },
    });
    // A generated password is shown this once; a chosen one is never echoed.
    ctx.body = { ...userView(user), ...(body.generate ? { password } : {}) };
  });

  router.post('/admin/users/:id/verification', async function resendVerification(ctx) {
    const id = ctx.params['id']!;
    const outcome = deps.resendVerification ? await deps.resendVerification(id) : 'not_found';
    if (outcome === 'not_found') throw new AdminError('not_found', 'no such user');
    if (outcome === 'verified') throw new AdminError('conflict', 'the address is verified already');
    await deps.audit.record({
      kind: 'email_verification_sent',
      subject: id,
      detail: { by: 'admin' },
    });
    ctx.status = 202;
    ctx.body = { sent: true };
  });
}
