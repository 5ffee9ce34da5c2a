import { createHash, createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '@portcullis/observability';
import type Router from '@koa/router';
import type { AccountsRepo, SignInLimiter, User } from '@portcullis/accounts';
import { ACR, acrSatisfies } from '@portcullis/claims';
import type { Context, Middleware } from 'koa';
import type { ClientMetadata } from 'oidc-provider';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { CurrentProvider } from '../mfa/provider-access.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import { translated, type SafeHtml } from '../ui/html.js';
import type { FactorChanges } from '../mfa/factor-changes.js';
import { refusedOverLimit } from '../mfa/limit.js';
import type { FactorRegistry } from '../mfa/factors.js';
import type { RecoveryCodes } from '../mfa/recovery-codes.js';
import { signedInWithin } from '../mfa/sign-in.js';
import { enrolmentOwner, qrSvg, type TotpService } from '../mfa/totp.js';
import { accountPage, accountSignInPage, recoveryCodesPage, totpEnrolPage } from '../mfa/views.js';
import type { Ui, UiFactory } from '../ui/index.js';
import type { EndCredentials } from '../self-service/end-credentials.js';

/** The account page; changes need a fresh sign-in (docs/security.md "Second factors"). */
export const ACCOUNT_CLIENT_ID = 'portcullis-account';
const CALLBACK = '/account/callback';

/** The static client of the account page (createMfa's staticClients, for the provider). */
export function accountClientMetadata(issuer: string): ClientMetadata {
  return {
    client_id: ACCOUNT_CLIENT_ID,
    client_name: 'Your account',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: [`${issuer}${CALLBACK}`],
    first_party: true,
  };
}

export interface AccountUser {
  user: User;
  /** CSRF token of the account page's forms for this session. */
  csrf: string;
  /** Signed in within FRESH_SIGN_IN_SECONDS, with the second factor when the user has one. */
  fresh: boolean;
  /** This session as the owner of an authenticator app's enrolment (enrolmentOwner). */
  enrolmentOwner: string;
}

export interface AccountDeps {
  host: CurrentProvider;
  accounts: AccountsRepo;
  audit: AuditRepo;
  factors: FactorRegistry;
  totp: TotpService;
  recoveryCodes: RecoveryCodes;
  factorChanges: FactorChanges;
  limiter: SignInLimiter;
  csrfKey: string;
  ui: UiFactory;
  /** A factor removed ends the other sessions and pending changes (self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
}

/** The account page's signed-in user (fresh or not), or undefined without a session. */
export function createAccountOf(
  deps: Pick<AccountDeps, 'host' | 'accounts' | 'factors' | 'csrfKey'>,
) {
  return async function accountOf(ctx: Context): Promise<AccountUser | undefined> {
    const session = await deps.host.current.Session.get(ctx);
    if (!session.accountId) return undefined;
    const user = await deps.accounts.findById(session.accountId);
    if (!user) return undefined;
    const fresh =
      signedInWithin(session.loginTs) &&
      (acrSatisfies(session.acr, ACR.mfa) || !(await deps.factors.hasSecondFactor(user.id)));
    const csrf = createHmac('sha256', deps.csrfKey)
      .update(`account:${session.uid}`)
      .digest('base64url');
    return { user, csrf, fresh, enrolmentOwner: enrolmentOwner.accountPage(session.uid) };
  };
}

export function accountRoutes(router: Router, deps: AccountDeps, form: Middleware) {
  const accountOf = createAccountOf(deps);

  /** The account page's language: Accept-Language, then the default. */
  const uiOf = (ctx: Context): Ui => deps.ui.of(ctx);

  function html(ctx: Context, status: number, body: SafeHtml, passkeyScript = false) {
    htmlHeaders(ctx, [], { passkeyScript, ui: uiOf(ctx) });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = body.toString();
  }

  /** The fresh user of this request, or undefined after answering with the sign-in page. */
  async function freshUser(ctx: Context, post: boolean): Promise<AccountUser | undefined> {
    const account = await accountOf(ctx);
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    if (!account || !account.fresh) {
      html(
        ctx,
        401,
        accountSignInPage(
          ui,
          t(account ? 'accountPage:signInAgain' : 'accountPage:signInToManage'),
        ),
      );
      return undefined;
    }
    if (
      post &&
      !constantTimeEqual(account.csrf, (ctx.request.body as Record<string, unknown>)?.['csrf'])
    ) {
      html(ctx, 403, accountSignInPage(ui, t('common:formExpired')));
      return undefined;
    }
    return account;
  }

  /** `notice`: a catalogue key. */
  async function showAccount(ctx: Context, account: AccountUser, notice?: string) {
    const { user } = account;
    const ui = uiOf(ctx);
    const [factors, left, sections] = await Promise.all([
      deps.factors.factorsOf(user.id),
      deps.recoveryCodes.remaining(user.id),
      Promise.all(deps.factors.kinds.map((k) => k.accountSection?.(ui, user.id, account.csrf))),
    ]);
    const totp = factors.find((f) => f.kind === 'totp');
    html(
      ctx,
      200,
      accountPage(ui, {
        email: user.email,
        csrf: account.csrf,
        totp: totp && { enrolledAt: totp.createdAt },
        recoveryCodesLeft: left,
        hasFactor: factors.length > 0,
        sections: sections.filter((section) => section !== undefined),
        notice: notice === undefined ? undefined : translated(ui.t)(notice),
      }),
      true,
    );
  }

  router.get('/account', async function showAccountPage(ctx) {
    const account = await freshUser(ctx, false);
    if (account) await showAccount(ctx, account);
  });

  router.get('/account/sign-in', async function accountSignIn(ctx) {
    const issuer = deps.host.current.issuer;
    const challenge = createHash('sha256').update(randomBytes(32)).digest('base64url');
    const url = new URL(`${issuer}/authorize`);
    url.search = new URLSearchParams({
      client_id: ACCOUNT_CLIENT_ID,
      response_type: 'code',
      redirect_uri: `${issuer}${CALLBACK}`,
      scope: 'openid',
      prompt: 'login',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    ctx.redirect(url.href);
  });

  router.get(CALLBACK, function accountCallback(ctx) {
    ctx.redirect('/account');
  });

  router.post('/account/totp/start', form, async function startTotp(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const { user } = account;
    if (!(await deps.totp.start(user.id, user.email, account.enrolmentOwner))) {
      await showAccount(ctx, account, 'accountPage:appAlreadySetUp');
      ctx.status = 409;
      return;
    }
    ctx.redirect('/account/totp');
    ctx.status = 303;
  });

  router.get('/account/totp', async function showTotpEnrolment(ctx) {
    const account = await freshUser(ctx, false);
    if (!account) return;
    const enrolment = await deps.totp.pending(
      account.user.id,
      account.user.email,
      account.enrolmentOwner,
    );
    if (!enrolment) return ctx.redirect('/account');
    html(
      ctx,
      200,
      totpEnrolPage(uiOf(ctx), {
        csrf: account.csrf,
        secret: enrolment.secret,
        qrUrl: '/account/totp/qr.svg',
      }),
    );
  });

  router.get('/account/totp/qr.svg', async function totpQrCode(ctx) {
    const account = await freshUser(ctx, false);
    if (!account) return;
    const enrolment = await deps.totp.pending(
      account.user.id,
      account.user.email,
      account.enrolmentOwner,
    );
    if (!enrolment) return ctx.throw(404);
    htmlHeaders(ctx);
    ctx.type = 'image/svg+xml';
    ctx.body = await qrSvg(enrolment.uri);
  });

  router.post('/account/totp/confirm', form, async function confirmTotp(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const { user } = account;
    const enrolment = await deps.totp.pending(user.id, user.email, account.enrolmentOwner);
    if (!enrolment) return ctx.redirect('/account');
    const counted = await deps.limiter.begin(ctx.ip, user.id);
    const ui = uiOf(ctx);
    const t = translated(ui.t);
    const page = (status: number, error: SafeHtml) =>
      html(
        ctx,
        status,
        totpEnrolPage(ui, {
          csrf: account.csrf,
          secret: enrolment.secret,
          qrUrl: '/account/totp/qr.svg',
          error,
        }),
      );
    if (await refusedOverLimit(ctx, counted, ui, page)) return;
    const code = (ctx.request.body as Record<string, unknown>)['code'];
    const hadFactor = await deps.factors.hasSecondFactor(user.id);
    if (
      !(await deps.totp.confirm(
        user.id,
        typeof code === 'string' ? code : '',
        account.enrolmentOwner,
      ))
    ) {
      return page(400, t('mfa:invalidCodeTime'));
    }
    await counted.succeeded();
    await deps.audit.record({ kind: 'mfa_enrolled', subject: user.id, detail: { factor: 'totp' } });
    const codes = await deps.factorChanges.enrolled(user.id, hadFactor);
    if (!codes) return showAccount(ctx, account, 'mfa:appOn');
    html(ctx, 200, recoveryCodesPage(ui, codes, t('mfa:appOn')));
  });

  router.post('/account/totp/remove', form, async function removeTotp(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const { user } = account;
    // An enrolment not yet confirmed is no factor: dropping it ends nothing else.
    const wasFactor = (await deps.factors.factorsOf(user.id)).some((f) => f.kind === 'totp');
    if (await deps.totp.remove(user.id)) {
      await deps.audit.record({
        kind: 'mfa_removed',
        subject: user.id,
        detail: { factor: 'totp' },
      });
    }
    await deps.factorChanges.removed(user.id);
    if (wasFactor) await deps.endCredentials(user.id, { keep: ctx });
    await showAccount(ctx, account, 'accountPage:appRemoved');
  });

  router.post('/account/recovery-codes', form, async function regenerateRecoveryCodes(ctx) {
    const account = await freshUser(ctx, true);
    if (!account) return;
    const { user } = account;
    if (!(await deps.factors.hasSecondFactor(user.id))) {
      await showAccount(ctx, account, 'accountPage:setUpFactorFirst');
      ctx.status = 409;
      return;
    }
    const codes = await deps.recoveryCodes.generate(user.id);
    await deps.audit.record({ kind: 'recovery_codes_generated', subject: user.id });
    const ui = uiOf(ctx);
    html(ctx, 200, recoveryCodesPage(ui, codes, translated(ui.t)('accountPage:oldCodesGone')));
  });
}
