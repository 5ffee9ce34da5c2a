import { createHmac, randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import {
  checkPassword,
  PasswordPolicyError,
  PASSWORD_MIN,
  type AccountTokens,
  type AccountsRepo,
} from '@portcullis/accounts';
import { constantTimeEqual } from '@portcullis/observability';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { AuditRepo } from '../../data/audit-repo.js';
import { formBody } from '../../kernel/form-body.js';
import { page } from '../interactions/views.js';
import { markup, translated, type SafeHtml } from '../ui/html.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailRequestLimiter } from '../mail/request-limits.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import type { EndCredentials } from './end-credentials.js';
import type { Ui, UiFactory } from '../ui/index.js';
import { interactionUid, mailPasswordChanged, resetLinkMail } from './password-mail.js';

export interface PasswordRouteDeps {
  host: ProviderHost;
  accounts: AccountsRepo;
  accountTokens: AccountTokens;
  audit: AuditRepo;
  mailer: Mailer;
  mailRequestLimiter: MailRequestLimiter;
  /** What a reset ends (end-credentials.ts). */
  endCredentials: EndCredentials;
  ui: UiFactory;
  logger: Logger;
  csrfKey: string;
  /** PASSWORD_RESET_TTL, seconds. */
  passwordResetTtl: number;
  /** Given when a reset proves an unverified address (SIGNUP_VERIFY=before-roles); else none change. */
  rolesOnVerification: string[] | undefined;
}

/** The outbox's kind of a /password/forgot request (its composer is registered below). */
const RESET_REQUEST = 'password_reset_request';

/** The forgot form's CSRF nonce: a cookie whose HMAC the form carries (double submit). */
const NONCE_COOKIE = 'pw_nonce';

/** The forgotten-password pages (README "Forgotten password", docs/mail.md). */
export function passwordRoutes(router: Router, deps: PasswordRouteDeps): void {
  const form = formBody('16kb');
  const hmac = (purpose: string, value: string) =>
    createHmac('sha256', deps.csrfKey).update(`${purpose}:${value}`).digest('base64url');
  const issuer = () => deps.host.current.issuer;
  const mailDeps = { accountTokens: deps.accountTokens, ttlSeconds: deps.passwordResetTtl };
  // The outbox's worker turns a queued request into its mail, after the answer (docs/mail.md).
  deps.mailer.composer(RESET_REQUEST, async (payload) => {
    const user = await deps.accounts.findByEmail(String(payload['email'] ?? ''));
    // A disabled account gets nothing: a reset must not undo an administrator's decision.
    if (!user || user.disabledAt !== null) return undefined;
    const ui = deps.ui.of({ get: () => '' }, payload['language']);
    const interaction = interactionUid(payload['interaction']);
    return (trx) => resetLinkMail(mailDeps, { issuer: issuer(), user, ui, interaction }, trx);
  });

  function show(ctx: Context, status: number, ui: Ui, title: SafeHtml, body: SafeHtml) {
    htmlHeaders(ctx, [], { ui });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = page(ui, title, body).toString();
  }

  const backLink = (ui: Ui, interaction: string | undefined) =>
    interaction
      ? markup`<p><a href="/interaction/${interaction}">${translated(ui.t)('password:backToSignIn')}</a></p>`
      : '';

  const interactionField = (interaction: string | undefined) =>
    interaction ? markup`<input type="hidden" name="interaction" value="${interaction}">` : '';

  function forgotForm(
    ctx: Context,
    status: number,
    ui: Ui,
    interaction?: string,
    error?: SafeHtml,
  ) {
    const t = translated(ui.t);
    const nonce = randomBytes(16).toString('base64url');
    ctx.cookies.set(NONCE_COOKIE, nonce, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/password',
      secure: ctx.secure,
      overwrite: true,
      maxAge: 3600_000,
    });
    show(
      ctx,
      status,
      ui,
      t('password:forgotTitle'),
      markup`${error ? markup`<p class="error" role="alert">${error}</p>` : ''}<p>${t('password:forgotIntro')}</p>
<form method="post" action="/password/forgot">
<input type="hidden" name="csrf" value="${hmac('forgot', nonce)}">
${interactionField(interaction)}
<label for="email">${t('password:email')}</label>
<input id="email" type="email" name="email" required autofocus autocomplete="email">
<button type="submit">${t('password:sendLink')}</button>
</form>
${backLink(ui, interaction)}`,
    );
  }

  function refused(ctx: Context, ui: Ui) {
    const t = translated(ui.t);
    show(ctx, 403, ui, t('common:requestRefused'), markup`<p>${t('common:formExpired')}</p>`);
  }

  function invalidLink(ctx: Context, ui: Ui, interaction: string | undefined) {
    const t = translated(ui.t);
    const again = `/password/forgot${interaction ? `?interaction=${interaction}` : ''}`;
    show(
      ctx,
      400,
      ui,
      t('password:invalidTitle'),
      markup`<p>${t('password:invalid')}</p><p><a href="${again}">${t('password:askAgain')}</a></p>`,
    );
  }

  /** `error`: the password policy's message, text. */
  function resetForm(
    ctx: Context,
    status: number,
    ui: Ui,
    token: string,
    interaction: string | undefined,
    error?: string,
  ) {
    const t = translated(ui.t);
    show(
      ctx,
      status,
      ui,
      t('password:resetTitle'),
      markup`${error ? markup`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/password/reset">
<input type="hidden" name="csrf" value="${hmac('reset', token)}">
<input type="hidden" name="token" value="${token}">
${interactionField(interaction)}
<label for="password">${t('password:newPassword')}</label>
<input id="password" type="password" name="password" required autofocus autocomplete="new-password" minlength="${PASSWORD_MIN}">
<p class="muted">${t('password:policy', { min: PASSWORD_MIN })}</p>
<button type="submit">${t('password:save')}</button>
</form>`,
    );
  }

  const field = (ctx: Context, name: string, max: number): string => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    const value = body?.[name];
    return typeof value === 'string' ? value.slice(0, max) : '';
  };

  router.get('/password/forgot', async function showForgot(ctx) {
    forgotForm(ctx, 200, deps.ui.of(ctx), interactionUid(ctx.query['interaction']));
  });

  router.post('/password/forgot', form, async function requestReset(ctx) {
    const ui = deps.ui.of(ctx);
    const interaction = interactionUid(field(ctx, 'interaction', 64));
    const nonce = ctx.cookies.get(NONCE_COOKIE);
    if (!nonce || !constantTimeEqual(hmac('forgot', nonce), field(ctx, 'csrf', 100))) {
      refused(ctx, ui);
      return;
    }
    const email = field(ctx, 'email', 320).trim();
    if (!email) {
      forgotForm(ctx, 400, ui, interaction);
      return;
    }
    const attempt = await deps.mailRequestLimiter.begin(ctx.ip, email);
    if (attempt.retryAfter > 0) {
      ctx.set('Retry-After', String(attempt.retryAfter));
      forgotForm(
        ctx,
        429,
        ui,
        interaction,
        translated(ui.t)('password:tooMany', { seconds: attempt.retryAfter }),
      );
      return;
    }
    // Durable before the answer, and one same write whatever the address: the lookup, the
    // token and the mail come after it, in the outbox's worker (docs/mail.md "Requests").
    await deps.mailer.request(RESET_REQUEST, email, {
      email,
      language: ui.language,
      ...(interaction ? { interaction } : {}),
    });
    ctx.cookies.set(NONCE_COOKIE, null, { path: '/password' });
    const t = translated(ui.t);
    show(
      ctx,
      200,
      ui,
      t('password:sentTitle'),
      markup`<p>${t('password:sent', { email, minutes: Math.floor(deps.passwordResetTtl / 60) })}</p>${backLink(ui, interaction)}`,
    );
  });

  router.get('/password/reset', async function showReset(ctx) {
    const ui = deps.ui.of(ctx);
    const token = typeof ctx.query['token'] === 'string' ? ctx.query['token'].slice(0, 100) : '';
    const interaction = interactionUid(ctx.query['interaction']);
    // peek, not consume: mail scanners open links before the person does.
    if (!(await deps.accountTokens.peek('password_reset', token))) {
      invalidLink(ctx, ui, interaction);
      return;
    }
    resetForm(ctx, 200, ui, token, interaction);
  });

  router.post('/password/reset', form, async function resetPassword(ctx) {
    const ui = deps.ui.of(ctx);
    const token = field(ctx, 'token', 100);
    const interaction = interactionUid(field(ctx, 'interaction', 64));
    if (!token || !constantTimeEqual(hmac('reset', token), field(ctx, 'csrf', 100))) {
      refused(ctx, ui);
      return;
    }
    const password = field(ctx, 'password', 4096);
    try {
      // Before the token is used: a refused password leaves the link working.
      checkPassword(password);
    } catch (error) {
      if (!(error instanceof PasswordPolicyError)) throw error;
      if (!(await deps.accountTokens.peek('password_reset', token))) {
        invalidLink(ctx, ui, interaction);
        return;
      }
      resetForm(ctx, 400, ui, token, interaction, error.message);
      return;
    }
    const grant = await deps.accountTokens.consume('password_reset', token);
    const user = grant && (await deps.accounts.findById(grant.userId));
    if (!user) {
      invalidLink(ctx, ui, interaction);
      return;
    }
    await deps.accounts.setPassword(user.id, password);
    // The mailed link proves the address: an unproven sign-up (maybe someone else's) is now the owner's.
    await deps.accounts.markEmailVerified(user.id, deps.rolesOnVerification);
    // Every session and token, and every pending e-mail change and link: the owner is back.
    await deps.endCredentials(user.id);
    await deps.audit.record({
      kind: 'password_reset',
      subject: user.id,
      detail: { via: 'self_service', ip: ctx.ip },
    });
    await mailPasswordChanged(deps.mailer, { issuer: issuer(), user, ui }).catch((error: unknown) =>
      deps.logger.error({ err: error }, 'password changed mail'),
    );
    const t = translated(ui.t);
    const next = interaction
      ? markup`<p><a href="/interaction/${interaction}">${t('password:continueSignIn')}</a></p>`
      : '';
    show(ctx, 200, ui, t('password:doneTitle'), markup`<p>${t('password:done')}</p>${next}`);
  });
}
