import type Router from '@koa/router';
import {
  PasswordPolicyError,
  type AccountTokens,
  type AccountsRepo,
  type SignInLimiter,
} from '@portcullis/accounts';
import { isUniqueViolation, type Db } from '@portcullis/db';
import { constantTimeEqual } from '@portcullis/observability';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { PersonalDataRepo } from '../../data/personal-data-repo.js';
import type { UserSessionsRepo } from '../../data/user-sessions-repo.js';
import type { AuthConfig } from '../../kernel/config.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailRequestLimiter } from '../mail/request-limits.js';
import type { Mfa } from '../mfa/index.js';
import type { EndCredentials } from '../self-service/end-credentials.js';
import { formBody } from '../../kernel/form-body.js';
import { ACCOUNT_CLIENT_ID } from '../mfa/index.js';
import { createAccountOf, type AccountUser } from './account-page.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import { translated, type SafeHtml } from '../ui/html.js';
import type { Translate, Ui, UiFactory } from '../ui/index.js';
import {
  cancelEmailPage,
  closePage,
  confirmEmailPage,
  emailCancelledPage,
  emailPage,
  messagePage,
  passwordPage,
  sessionsPage,
  signInAgainPage,
} from './views.js';

/** What the account page's routes use (the root's AuthAppParts gives them) and its CSRF key. */
export interface SelfServiceParts {
  host: ProviderHost;
  accounts: AccountsRepo;
  audit: AuditRepo;
  logger: Logger;
  /** Second factors (README "Multi-factor sign-in"): its routes are mounted here. */
  mfa: Mfa;
  /** Each page's language, translations and brand (identity/ui/). */
  ui: UiFactory;
  /** Outgoing mail (identity/mail/). */
  mailer: Mailer;
  /** Single-use links and codes mailed to people. */
  accountTokens: AccountTokens;
  /** ACCOUNT_MAIL_*: requests that mail someone, per IP and per address. */
  mailRequestLimiter: MailRequestLimiter;
  /** What a change of credential or owner ends, for every door (self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
  /** Transactions that write a link's token and queue the mails carrying it together. */
  db: Pick<Db, 'transaction'>;
  /** The self-service policy (SIGNUP*, PASSWORD_RESET_TTL, …). */
  selfService: AuthConfig['selfService'];
  /** Failed sign-ins per IP and per account (LOGIN_*). */
  signInLimiter: SignInLimiter;
  /** A user's live sessions and grants. */
  userSessions: UserSessionsRepo;
  /** A user's orders and payments; closing an account. */
  personalData: PersonalDataRepo;
  csrfKey: string;
}

const emailSchema = z.string().trim().email().max(254);
const field = (ctx: Context, name: string) => {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};
const sameAddress = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
const stamp = (at = new Date()) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The account page's self-service (README "Your account"): each change needs a fresh
 * sign-in as the factor changes do (docs/security.md "Second factors").
 */
export function selfServiceRoutes(router: Router, parts: SelfServiceParts): void {
  const accountOf = createAccountOf({ ...parts, factors: parts.mfa.factors });
  const form = formBody('16kb');
  const uiOf = (ctx: Context): Ui => parts.ui.of(ctx);

  function html(ctx: Context, status: number, body: SafeHtml) {
    htmlHeaders(ctx, [], { ui: parts.ui.of(ctx) });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = body.toString();
  }

  /** The fresh user of this request, or undefined after answering with the sign-in page. */
  async function freshUser(ctx: Context, post: boolean): Promise<AccountUser | undefined> {
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const account = await accountOf(ctx);
    if (!account || !account.fresh) {
      const reason = t(account ? 'account:signInAgain' : 'account:signInFirst');
      html(ctx, 401, signInAgainPage(ui, reason));
      return undefined;
    }
    if (post && !constantTimeEqual(account.csrf, field(ctx, 'csrf'))) {
      html(ctx, 403, signInAgainPage(ui, t('common:formExpired')));
      return undefined;
    }
    return account;
  }

  /** The current password, counted as a sign-in attempt (LOGIN_*); false after answering. */
  async function currentPasswordOk(
    ctx: Context,
    account: AccountUser,
    refuse: (status: number, error: SafeHtml) => void,
  ): Promise<boolean> {
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const attempt = await parts.signInLimiter.begin(ctx.ip, account.user.email);
    if (attempt.retryAfter > 0) {
      ctx.set('Retry-After', String(attempt.retryAfter));
      refuse(429, t('account:tooMany', { seconds: attempt.retryAfter }));
      return false;
    }
    const password = field(ctx, 'current_password');
    if (!(await parts.accounts.verifyCredentials(account.user.email, password))) {
      refuse(400, t('account:wrongPassword'));
      return false;
    }
    await attempt.succeeded();
    return true;
  }

  /** A notice to the person; a failed delivery is logged and does not undo the change. */
  async function notify(to: string, t: Translate, key: string, vars: Record<string, string>) {
    const text = t(`account:${key}Text`, { ...vars, interpolation: { escapeValue: false } });
    try {
      await parts.mailer.send({ to, subject: t(`account:${key}Subject`), text });
    } catch (err) {
      parts.logger.error({ err, mail: key }, 'account notice not sent');
    }
  }

  /** Announced as oidc-provider announces a revocation: the deny list stops its access tokens. */
  const announceRevoked = (ctx: Context, grantIds: string[]) => {
    for (const grantId of grantIds) parts.host.current.emit('grant.revoked', ctx, grantId);
  };

  const clientName = async (clientId: string) =>
    (await parts.host.current.Client.find(clientId).catch(() => undefined))?.clientName ?? clientId;

  async function sessionsAndGrants(userId: string) {
    const [sessions, grants] = await Promise.all([
      parts.userSessions.sessions(userId),
      parts.userSessions.grants(userId),
    ]);
    const names = new Map<string, string>();
    for (const id of new Set([
      ...sessions.flatMap((s) => s.clientIds),
      ...grants.map((g) => g.clientId),
    ]))
      names.set(id, await clientName(id));
    return { sessions, grants, names };
  }

  // Change password.
  router.get('/account/password', async function showPasswordForm(ctx) {
    const account = await freshUser(ctx, false);
    if (account) html(ctx, 200, passwordPage(uiOf(ctx), { csrf: account.csrf }));
  });

  router.post('/account/password', form, async function changePassword(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const refuse = (status: number, error: SafeHtml) =>
      html(ctx, status, passwordPage(ui, { csrf: account.csrf, error }));
    if (!(await currentPasswordOk(ctx, account, refuse))) return;
    const { user } = account;
    try {
      await parts.accounts.setPassword(user.id, field(ctx, 'new_password'));
    } catch (error) {
      if (!(error instanceof PasswordPolicyError)) throw error;
      return refuse(400, t('account:passwordRefused', { reason: error.message }));
    }
    await parts.endCredentials(user.id, { keep: ctx });
    await parts.audit.record({ kind: 'password_changed', subject: user.id });
    await notify(user.email, ui.t, 'passwordMail', { email: user.email, at: stamp() });
    html(ctx, 200, messagePage(ui, t('account:passwordTitle'), t('account:passwordChanged')));
  });

  // Change e-mail: a link to the new address, confirmed by a POST (scanners prefetch GETs).
  router.get('/account/email', async function showEmailForm(ctx) {
    const account = await freshUser(ctx, false);
    if (account) html(ctx, 200, emailPage(uiOf(ctx), { csrf: account.csrf }));
  });

  router.post('/account/email', form, async function requestEmailChange(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const typed = field(ctx, 'email');
    const refuse = (status: number, error: SafeHtml) =>
      html(ctx, status, emailPage(ui, { csrf: account.csrf, email: typed, error }));
    const parsed = emailSchema.safeParse(typed);
    if (!parsed.success) return refuse(400, t('account:emailInvalid'));
    const address = parsed.data;
    const { user } = account;
    if (sameAddress(address, user.email)) return refuse(400, t('account:emailSame'));
    if (!(await currentPasswordOk(ctx, account, refuse))) return;
    const counted = await parts.mailRequestLimiter.begin(ctx.ip, address);
    if (counted.retryAfter > 0) {
      ctx.set('Retry-After', String(counted.retryAfter));
      return refuse(429, t('account:tooMany', { seconds: counted.retryAfter }));
    }
    // Counted first: a signed-in user learns whether an address is taken only within the limits.
    if (await parts.accounts.findByEmail(address)) return refuse(409, t('account:emailTaken'));
    const ttl = parts.selfService.emailVerificationTtl;
    const minutes = String(Math.round(ttl / 60));
    const { issuer } = parts.host.current;
    const text = { interpolation: { escapeValue: false } };
    // Both links and both mails commit together: no change is pending that the owner was not told of.
    await parts.db.transaction(async (trx) => {
      const issue = (purpose: 'email_change' | 'email_change_cancel') =>
        parts.accountTokens.issue({
          purpose,
          userId: user.id,
          email: address,
          ttlSeconds: ttl,
          trx,
        });
      const confirm = await issue('email_change');
      const cancel = await issue('email_change_cancel');
      const link = `${issuer}/account/email/confirm?token=${confirm.token}`;
      await parts.mailer.send(
        {
          to: address,
          subject: ui.t('account:emailMailSubject'),
          text: ui.t('account:emailMailText', { email: address, link, minutes, ...text }),
        },
        { trx },
      );
      await parts.mailer.send(
        {
          to: user.email,
          subject: ui.t('account:emailNoticeSubject'),
          text: ui.t('account:emailNoticeText', {
            from: user.email,
            to: address,
            at: stamp(),
            minutes,
            link: `${issuer}/account/email/cancel?token=${cancel.token}`,
            ...text,
          }),
        },
        { trx },
      );
    });
    await parts.audit.record({
      kind: 'email_change_requested',
      subject: user.id,
      detail: { from: user.email, to: address },
    });
    html(
      ctx,
      200,
      emailPage(ui, { csrf: account.csrf, notice: t('account:emailSent', { email: address }) }),
    );
  });

  router.get('/account/email/confirm', async function showEmailConfirm(ctx) {
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const token = typeof ctx.query['token'] === 'string' ? ctx.query['token'] : '';
    const grant = await parts.accountTokens.peek('email_change', token);
    if (!grant?.email)
      return html(
        ctx,
        400,
        messagePage(ui, t('account:confirmTitle'), t('account:confirmInvalid')),
      );
    html(ctx, 200, confirmEmailPage(ui, { token, email: grant.email }));
  });

  router.post('/account/email/confirm', form, async function confirmEmailChange(ctx) {
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const invalid = (status: number, key: string) =>
      html(ctx, status, messagePage(ui, t('account:confirmTitle'), t(key)));
    const grant = await parts.accountTokens.consume('email_change', field(ctx, 'token'));
    const user = grant && (await parts.accounts.findById(grant.userId));
    if (!grant?.email || !user) return invalid(400, 'account:confirmInvalid');
    let changed;
    try {
      changed = await parts.accounts.setEmail(user.id, grant.email);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return invalid(409, 'account:emailTaken');
    }
    if (!changed) return invalid(400, 'account:confirmInvalid');
    // A new owner of the address: the account's other sessions, tokens and links end.
    await parts.endCredentials(user.id, { keep: ctx });
    await parts.audit.record({
      kind: 'email_changed',
      subject: user.id,
      detail: { from: user.email, to: changed.email },
    });
    await notify(user.email, ui.t, 'emailChangedMail', {
      from: user.email,
      to: changed.email,
      at: stamp(),
      reset: `${parts.host.current.issuer}/password/forgot`,
    });
    html(
      ctx,
      200,
      messagePage(
        ui,
        t('account:confirmTitle'),
        t('account:emailChanged', { email: changed.email }),
      ),
    );
  });

  // Cancel from the old address: a GET shows a button (scanners prefetch), the POST cancels.
  router.get('/account/email/cancel', async function showEmailCancel(ctx) {
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const token = typeof ctx.query['token'] === 'string' ? ctx.query['token'] : '';
    const grant = await parts.accountTokens.peek('email_change_cancel', token);
    const user = grant && (await parts.accounts.findById(grant.userId));
    if (!grant?.email || !user)
      return html(ctx, 400, messagePage(ui, t('account:cancelTitle'), t('account:cancelInvalid')));
    html(ctx, 200, cancelEmailPage(ui, { token, from: user.email, to: grant.email }));
  });

  router.post('/account/email/cancel', form, async function cancelEmailChange(ctx) {
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const grant = await parts.accountTokens.consume('email_change_cancel', field(ctx, 'token'));
    const user = grant && (await parts.accounts.findById(grant.userId));
    if (!grant?.email || !user)
      return html(ctx, 400, messagePage(ui, t('account:cancelTitle'), t('account:cancelInvalid')));
    // Whoever asked was signed in: every session goes with the pending change (the one list).
    await parts.endCredentials(user.id);
    await parts.audit.record({
      kind: 'email_change_cancelled',
      subject: user.id,
      detail: { to: grant.email },
    });
    html(ctx, 200, emailCancelledPage(ui, user.email));
  });

  // Sessions and apps.
  async function showSessions(ctx: Context, account: AccountUser, notice?: SafeHtml) {
    const ui = uiOf(ctx);
    const current = (await parts.host.current.Session.get(ctx)).uid;
    const { sessions, grants, names } = await sessionsAndGrants(account.user.id);
    html(
      ctx,
      200,
      sessionsPage(ui, {
        csrf: account.csrf,
        notice,
        sessions: sessions.map((s) => ({
          uid: s.uid,
          signedInAt: s.signedInAt,
          current: s.uid === current,
          apps: s.clientIds.filter((c) => c !== ACCOUNT_CLIENT_ID).map((c) => names.get(c) ?? c),
        })),
        grants: grants
          .filter((g) => g.clientId !== ACCOUNT_CLIENT_ID)
          .map((g) => ({
            id: g.id,
            app: names.get(g.clientId) ?? g.clientId,
            scopes: g.scopes,
            since: g.createdAt,
          })),
      }),
    );
  }

  router.get('/account/sessions', async function listSessions(ctx) {
    const account = await freshUser(ctx, false);
    if (account) await showSessions(ctx, account);
  });

  router.post('/account/sessions/end', form, async function endSession(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const uid = field(ctx, 'session');
    const current = (await parts.host.current.Session.get(ctx)).uid;
    const ended = await parts.userSessions.endSession(account.user.id, uid);
    if (!ended) {
      await showSessions(ctx, account, t('account:gone'));
      ctx.status = 404;
      return;
    }
    announceRevoked(ctx, ended.grantIds);
    await parts.audit.record({
      kind: 'session_ended',
      subject: account.user.id,
      detail: { session: uid, by: 'user', grants: ended.grantIds.length },
    });
    if (uid === current)
      return html(ctx, 200, messagePage(ui, t('account:title'), t('account:sessionEnded'), false));
    await showSessions(ctx, account, t('account:sessionEnded'));
  });

  // Logout everywhere else: the one list a recovery ends, this browser kept.
  router.post('/account/sessions/end-others', form, async function endOtherSessions(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    await parts.endCredentials(account.user.id, { keep: ctx });
    await parts.audit.record({
      kind: 'sessions_ended',
      subject: account.user.id,
      detail: { by: 'user' },
    });
    await showSessions(ctx, account, translated(uiOf(ctx).t)('account:sessionsEndedOthers'));
  });

  router.post('/account/apps/revoke', form, async function revokeApp(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const grantId = field(ctx, 'grant');
    if (!(await parts.userSessions.revokeGrant(account.user.id, grantId))) {
      await showSessions(ctx, account, t('account:gone'));
      ctx.status = 404;
      return;
    }
    announceRevoked(ctx, [grantId]);
    await parts.audit.record({
      kind: 'grant_revoked',
      subject: account.user.id,
      grantId,
      detail: { by: 'user' },
    });
    await showSessions(ctx, account, t('account:appRevoked'));
  });

  // Download my data: everything kept about the person, no secret nor hash.
  router.get('/account/data', async function downloadData(ctx) {
    const account = await freshUser(ctx, false);
    if (!account) return;
    const { user } = account;
    const [factors, recoveryCodesLeft, { sessions, grants, names }, audit, records] =
      await Promise.all([
        parts.mfa.factors.factorsOf(user.id),
        parts.mfa.repo.countRecoveryCodes(user.id),
        sessionsAndGrants(user.id),
        parts.audit.listBySubject(user.id),
        parts.personalData.businessRecords(user.id),
      ]);
    htmlHeaders(ctx);
    ctx.set('Content-Disposition', 'attachment; filename="account-data.json"');
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(
      {
        exportedAt: new Date(),
        profile: {
          id: user.id,
          email: user.email,
          name: user.name,
          emailVerifiedAt: user.emailVerifiedAt,
          createdAt: user.createdAt,
          updatedAt: user.updatedAt,
        },
        roles: user.roles,
        secondFactors: factors.map((f) => ({
          kind: f.kind,
          name: f.name,
          createdAt: f.createdAt,
          lastUsedAt: f.lastUsedAt,
        })),
        recoveryCodesLeft,
        sessions: sessions.map((s) => ({
          signedInAt: s.signedInAt,
          expiresAt: s.expiresAt,
          amr: s.amr,
          apps: s.clientIds.map((c) => names.get(c) ?? c),
        })),
        apps: grants.map((g) => ({
          clientId: g.clientId,
          name: names.get(g.clientId) ?? g.clientId,
          scopes: g.scopes,
          since: g.createdAt,
          expiresAt: g.expiresAt,
        })),
        audit: audit.map((e) => ({
          at: e.at,
          kind: e.kind,
          clientId: e.clientId,
          detail: e.detail,
        })),
        orders: records.orders,
        payments: records.payments,
      },
      null,
      2,
    );
  });

  // Close the account.
  router.get('/account/close', async function showCloseForm(ctx) {
    const account = await freshUser(ctx, false);
    if (account) html(ctx, 200, closePage(uiOf(ctx), { csrf: account.csrf }));
  });

  router.post('/account/close', form, async function closeAccount(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const { user } = account;
    if (!sameAddress(field(ctx, 'confirm_email'), user.email))
      return html(
        ctx,
        400,
        closePage(ui, { csrf: account.csrf, error: t('account:closeMismatch') }),
      );
    await parts.endCredentials(user.id);
    const closure = await parts.personalData.close(user.id);
    if (!closure)
      return html(ctx, 404, messagePage(ui, t('account:closeTitle'), t('account:gone')));
    await parts.audit.record({
      kind: 'account_closed',
      subject: user.id,
      detail: { by: 'user', ...closure },
    });
    await notify(user.email, ui.t, 'closedMail', { email: user.email, at: stamp() });
    html(ctx, 200, messagePage(ui, t('account:closeTitle'), t('account:closed'), false));
  });
}
