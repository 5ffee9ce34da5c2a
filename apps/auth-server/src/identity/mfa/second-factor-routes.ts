import type Router from '@koa/router';
import type { AccountsRepo, SignInLimiter } from '@portcullis/accounts';
import type { Context, Middleware } from 'koa';
import type { Interaction } from 'oidc-provider';
import type { Logger } from 'pino';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { CurrentProvider } from './provider-access.js';
import { htmlHeaders, httpOrigins } from '../../kernel/security-headers.js';
import type { FactorChanges } from './factor-changes.js';
import type { FactorRegistry } from './factors.js';
import type { RecoveryCodes } from './recovery-codes.js';
import { AMR, type CompleteSignIn, type PendingSignIn, type PendingSignInOf } from './sign-in.js';
import { enrolmentOwner, qrSvg, type TotpService } from './totp.js';
import { factorPage, totpEnrolPage } from './views.js';
import { translated, type SafeHtml } from '../ui/html.js';
import { refusedOverLimit } from './limit.js';
import type { Ui, UiFactory } from '../ui/index.js';
import { clientDisplayName } from '../ui/client-name.js';

export interface SecondFactorDeps {
  host: CurrentProvider;
  factors: FactorRegistry;
  totp: TotpService;
  recoveryCodes: RecoveryCodes;
  factorChanges: FactorChanges;
  completeSignIn: CompleteSignIn;
  pendingSignInOf: PendingSignInOf;
  /** Failed second-factor codes per IP and per user (README "Multi-factor sign-in"). */
  limiter: SignInLimiter;
  audit: AuditRepo;
  accounts: AccountsRepo;
  logger: Logger;
  csrfToken(uid: string): string;
  checkCsrf(uid: string, presented: unknown): boolean;
  ui: UiFactory;
}

/** A sign-in's page language: its ui_locales, then Accept-Language, then the default. */
export const interactionUi = (
  deps: { ui: UiFactory },
  ctx: Context,
  interaction: Interaction,
): Ui => deps.ui.of(ctx, interaction.params['ui_locales']);

/** The factor page of a pending sign-in: what this user can use, and a way out. */
export async function renderFactorPage(
  ctx: Context,
  deps: SecondFactorDeps,
  interaction: Interaction,
  pending: PendingSignIn,
  status = 200,
  /** A `translated(ui.t)(…)` result. */
  error?: SafeHtml,
): Promise<void> {
  const ui = interactionUi(deps, ctx, interaction);
  const client = await deps.host.current.Client.find(String(interaction.params['client_id']));
  const csrf = deps.csrfToken(interaction.uid);
  const [factors, recoveryLeft, otherForms] = await Promise.all([
    deps.factors.factorsOf(pending.accountId),
    deps.recoveryCodes.remaining(pending.accountId),
    Promise.all(
      deps.factors.kinds.map(
        (k) =>
          k.signInForm?.({ uid: interaction.uid, csrf, userId: pending.accountId, ui }) ??
          Promise.resolve(undefined),
      ),
    ),
  ]);
  const input = { uid: interaction.uid, csrf, userId: pending.accountId, ui };
  const setupForms =
    factors.length > 0
      ? []
      : await Promise.all(deps.factors.kinds.map((k) => k.setupForm?.(input)));
  // Its forms end at the client's redirect_uri (CSP form-action follows the redirects).
  htmlHeaders(ctx, httpOrigins(client?.redirectUris), {
    passkeyScript: [...otherForms, ...setupForms].some(Boolean),
    ui,
  });
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = factorPage(ui, {
    uid: interaction.uid,
    csrf,
    clientName: clientDisplayName(ui, client),
    hasTotp: factors.some((f) => f.kind === 'totp'),
    hasRecoveryCodes: factors.length > 0 && recoveryLeft > 0,
    otherForms: otherForms.filter((f) => f !== undefined),
    setupForms: setupForms.filter((f) => f !== undefined),
    error,
  }).toString();
}

/** POST /interaction/:uid/totp and /recovery: the pending user's own factor, limited. */
export function secondFactorRoutes(router: Router, deps: SecondFactorDeps, form: Middleware) {
  async function pendingStep(ctx: Context) {
    const interaction = await deps.host.current.interactionDetails(ctx.req, ctx.res);
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (!deps.checkCsrf(interaction.uid, body?.['csrf'])) {
      htmlHeaders(ctx);
      ctx.throw(403, 'form expired');
    }
    const pending = await deps.pendingSignInOf(interaction);
    if (!pending) ctx.throw(400, 'not a second-factor step');
    return { interaction, pending, body: body ?? {} };
  }

  async function attempt(
    ctx: Context,
    interaction: Interaction,
    pending: PendingSignIn,
    factor: string,
    check: () => Promise<boolean>,
  ): Promise<boolean> {
    const counted = await deps.limiter.begin(ctx.ip, pending.accountId);
    const ui = interactionUi(deps, ctx, interaction);
    const refused = await refusedOverLimit(ctx, counted, ui, (status, message) =>
      renderFactorPage(ctx, deps, interaction, pending, status, message),
    );
    if (refused) return false;
    if (await check()) {
      await counted.succeeded();
      return true;
    }
    deps.logger.warn({ event: 'mfa_failed', factor, ip: ctx.ip }, 'wrong second factor');
    await deps.audit.record({
      kind: 'mfa_failed',
      subject: pending.accountId,
      detail: { factor, ip: ctx.ip },
    });
    await renderFactorPage(
      ctx,
      deps,
      interaction,
      pending,
      400,
      translated(ui.t)('mfa:invalidCode'),
    );
    return false;
  }

  router.post('/interaction/:uid/totp', form, async function submitTotp(ctx) {
    const { interaction, pending, body } = await pendingStep(ctx);
    const code = typeof body['code'] === 'string' ? body['code'] : '';
    if (
      await attempt(ctx, interaction, pending, 'totp', () =>
        deps.totp.verify(pending.accountId, code),
      )
    )
      await deps.completeSignIn(ctx, interaction, { accountId: pending.accountId, amr: [AMR.otp] });
  });

  router.post('/interaction/:uid/recovery', form, async function submitRecoveryCode(ctx) {
    const { interaction, pending, body } = await pendingStep(ctx);
    const code = typeof body['recovery_code'] === 'string' ? body['recovery_code'] : '';
    const used = await attempt(ctx, interaction, pending, 'recovery_code', async () =>
      (await deps.factors.hasSecondFactor(pending.accountId))
        ? deps.recoveryCodes.use(pending.accountId, code)
        : false,
    );
    if (!used) return;
    const left = await deps.recoveryCodes.remaining(pending.accountId);
    await deps.audit.record({
      kind: 'recovery_code_used',
      subject: pending.accountId,
      detail: { remaining: left },
    });
    await deps.completeSignIn(ctx, interaction, { accountId: pending.accountId, amr: [AMR.otp] });
  });

  /** A user with no factor sets up an app here when the sign-in needs one (never when enrolled). */
  async function enrolmentStep(ctx: Context, post: boolean) {
    const interaction = await deps.host.current.interactionDetails(ctx.req, ctx.res);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (post && !deps.checkCsrf(interaction.uid, body['csrf'])) ctx.throw(403, 'form expired');
    const pending = await deps.pendingSignInOf(interaction);
    if (!pending) ctx.throw(400, 'not a second-factor step');
    if (await deps.factors.hasSecondFactor(pending.accountId))
      ctx.throw(400, 'the account has a second factor: use it');
    const user = await deps.accounts.findById(pending.accountId);
    if (!user) ctx.throw(400, 'no such user');
    return { interaction, pending, user, body };
  }

  async function showEnrolment(
    ctx: Context,
    interaction: Interaction,
    secret: string,
    status = 200,
    error?: SafeHtml,
  ) {
    const client = await deps.host.current.Client.find(String(interaction.params['client_id']));
    const ui = interactionUi(deps, ctx, interaction);
    htmlHeaders(ctx, httpOrigins(client?.redirectUris), { ui });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = totpEnrolPage(ui, {
      csrf: deps.csrfToken(interaction.uid),
      secret,
      qrUrl: `/interaction/${interaction.uid}/totp/qr.svg`,
      action: `/interaction/${interaction.uid}/totp/confirm`,
      cancelHref: `/interaction/${interaction.uid}`,
      error,
    }).toString();
  }

  router.post('/interaction/:uid/totp/start', form, async function startTotpAtSignIn(ctx) {
    const { interaction, user } = await enrolmentStep(ctx, true);
    // This sign-in's own enrolment, shown again; any other one is replaced, never shown.
    const owner = enrolmentOwner.signIn(interaction.uid);
    const enrolment =
      (await deps.totp.pending(user.id, user.email, owner)) ??
      (await deps.totp.start(user.id, user.email, owner));
    if (!enrolment) return ctx.throw(400, 'the account has a second factor: use it');
    await showEnrolment(ctx, interaction, enrolment.secret);
  });

  router.get('/interaction/:uid/totp/qr.svg', async function totpQrAtSignIn(ctx) {
    const { interaction, user } = await enrolmentStep(ctx, false);
    const owner = enrolmentOwner.signIn(interaction.uid);
    const enrolment = await deps.totp.pending(user.id, user.email, owner);
    if (!enrolment) return ctx.throw(404);
    htmlHeaders(ctx);
    ctx.type = 'image/svg+xml';
    ctx.body = await qrSvg(enrolment.uri);
  });

  router.post('/interaction/:uid/totp/confirm', form, async function confirmTotpAtSignIn(ctx) {
    const { interaction, pending, user, body } = await enrolmentStep(ctx, true);
    const owner = enrolmentOwner.signIn(interaction.uid);
    const enrolment = await deps.totp.pending(user.id, user.email, owner);
    if (!enrolment) return ctx.throw(400, 'no enrolment in progress');
    const code = typeof body['code'] === 'string' ? body['code'] : '';
    const counted = await deps.limiter.begin(ctx.ip, user.id);
    const ui = interactionUi(deps, ctx, interaction);
    const refused = await refusedOverLimit(ctx, counted, ui, (status, message) =>
      showEnrolment(ctx, interaction, enrolment.secret, status, message),
    );
    if (refused) return;
    if (!(await deps.totp.confirm(user.id, code, owner))) {
      const message = translated(ui.t)('mfa:invalidCodeTime');
      return showEnrolment(ctx, interaction, enrolment.secret, 400, message);
    }
    await counted.succeeded();
    await deps.audit.record({ kind: 'mfa_enrolled', subject: user.id, detail: { factor: 'totp' } });
    // The sign-in is complete (password and this code); the codes are shown before going on.
    const codes = await deps.factorChanges.enrolled(user.id, false);
    await deps.completeSignIn(ctx, interaction, {
      accountId: pending.accountId,
      amr: [AMR.otp],
      recoveryCodes: codes && { codes, intro: 'mfa:appOn' },
    });
  });
}
