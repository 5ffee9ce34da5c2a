import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type { AccountsRepo } from '@portcullis/accounts';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { EndCredentials } from '../../identity/self-service/end-credentials.js';
import { mailResetLink, type PasswordMailDeps } from '../../identity/self-service/password-mail.js';
import type { UiFactory } from '../../identity/ui/index.js';
import { AdminError } from './errors.js';
import { userView } from './parse.js';

export interface ForceResetDeps {
  accounts: AccountsRepo;
  audit: AuditRepo;
  /** The reset mail: its token, outbox, lifetime, language (the default) and issuer. */
  passwordMail: PasswordMailDeps & { ui: UiFactory; issuer: () => string };
  endCredentials: EndCredentials;
}

/**
 * POST /admin/users/:id/password-reset: the password stops working, every session ends, and
 * the user is mailed a link to choose a new one (README "Forgotten password").
 */
export function forceResetRoutes(router: Router, deps: ForceResetDeps): void {
  router.post('/admin/users/:id/password-reset', async function forcePasswordReset(ctx) {
    // A random password nobody knows: the old one is unusable until the link is used.
    const user = await deps.accounts.setPassword(
      ctx.params['id']!,
      randomBytes(32).toString('base64url'),
    );
    if (!user) throw new AdminError('not_found', 'no such user');
    // Before the mail: the new link is issued after the old links and changes end.
    await deps.endCredentials(user.id);
    const { ui, issuer, ...mail } = deps.passwordMail;
    // Mailed only to an active account; a disabled one keeps no usable password either way.
    const mailed = user.disabledAt === null;
    if (mailed) {
      await mailResetLink(mail, {
        issuer: issuer(),
        user,
        ui: ui.of({ get: () => '' }),
        forced: true,
      });
    }
    await deps.audit.record({
      kind: 'password_reset',
      subject: user.id,
      detail: { via: 'admin', forced: true, mailed },
    });
    ctx.body = { ...userView(user), reset_link_mailed: mailed };
  });
}
