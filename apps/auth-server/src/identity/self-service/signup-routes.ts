import { createHmac, randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import {
  checkPassword,
  hashPassword,
  PasswordPolicyError,
  type AccountsRepo,
  type User,
} from '@portcullis/accounts';
import { isUniqueViolation } from '@portcullis/db';
import { constantTimeEqual } from '@portcullis/observability';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AuthConfig } from '../../kernel/config.js';
import type { AuditRepo } from '../../data/audit-repo.js';
import { formBody } from '../../kernel/form-body.js';
import type { MailRequestLimiter } from '../mail/request-limits.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import type { Ui, UiFactory } from '../ui/index.js';
import { translated, type SafeHtml } from '../ui/html.js';
import { rolesOnVerification, signupOffered } from './signup-doors.js';
import { INTERACTION_UID, type VerificationMail } from './signup-mail.js';
import {
  closedPage,
  messagePage,
  resendPage,
  signupPage,
  verifiedPage,
  verifyPage,
} from './signup-views.js';

export interface SignupDeps {
  host: ProviderHost;
  accounts: AccountsRepo;
  audit: AuditRepo;
  logger: Logger;
  ui: UiFactory;
  mail: VerificationMail;
  mailRequestLimiter: MailRequestLimiter;
  selfService: AuthConfig['selfService'];
  csrfKey: string;
}

/** The form nonce: a signed, short-lived cookie of /signup; the form carries its HMAC. */
const FORM_COOKIE = '_signup_form';
const FORM_COOKIE_MS = 60 * 60 * 1000;
const email = z.email().max(320);

const field = (ctx: Context, name: string) => {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/** GET /signup, /signup/verify, /signup/resend and their POSTs (README "Sign-up"). */
export function signupRoutes(router: Router, deps: SignupDeps): void {
  const { host, accounts, selfService, mail } = deps;
  const form = formBody('16kb');
  const tokenOf = (nonce: string) =>
    createHmac('sha256', deps.csrfKey).update(`signup:${nonce}`).digest('base64url');

  function csrfFor(ctx: Context): string {
    let nonce = ctx.cookies.get(FORM_COOKIE);
    if (!nonce || !/^[A-Za-z0-9_-]{22}$/.test(nonce)) {
      nonce = randomBytes(16).toString('base64url');
      ctx.cookies.set(FORM_COOKIE, nonce, {
        httpOnly: true,
        sameSite: 'lax',
        path: '/signup',
        maxAge: FORM_COOKIE_MS,
        secure: ctx.secure,
        overwrite: true,
      });
    }
    return tokenOf(nonce);
  }

  function formValid(ctx: Context): boolean {
    const nonce = ctx.cookies.get(FORM_COOKIE);
    return nonce !== undefined && constantTimeEqual(tokenOf(nonce), field(ctx, 'csrf'));
  }

  function show(ctx: Context, status: number, html: SafeHtml) {
    htmlHeaders(ctx, [], { ui: deps.ui.of(ctx) });
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = html.toString();
  }

  /** The sign-in this request came from, when it is still open: its uid and its client. */
  async function interactionOf(uid: string) {
    if (!INTERACTION_UID.test(uid)) return undefined;
    const interaction = await host.current.Interaction.find(uid);
    if (!interaction) return undefined;
    const client = await host.current.Client.find(String(interaction.params['client_id']));
    return { uid, uiLocales: interaction.params['ui_locales'], metadata: client?.metadata() };
  }

  /** Sign-up as this request may use it, or undefined when it is closed (404 page shown). */
  async function opened(ctx: Context, uid: string) {
    const from = uid ? await interactionOf(uid) : undefined;
    const ui = deps.ui.of(ctx, from?.uiLocales);
    if (!signupOffered(selfService, from?.metadata)) {
      show(ctx, 404, closedPage(ui));
      return undefined;
    }
    return { ui, interaction: from?.uid };
  }

  function refused(ctx: Context, ui: Ui) {
    show(
      ctx,
      403,
      messagePage(
        ui,
        translated(ui.t)('common:requestRefused'),
        translated(ui.t)('common:formExpired'),
      ),
    );
  }

  /** Counts a mail-sending request; false (429 shown by `page`) when over a limit. */
  async function withinLimits(
    ctx: Context,
    address: string,
    page: (error: SafeHtml) => SafeHtml,
    ui: Ui,
  ) {
    const attempt = await deps.mailRequestLimiter.begin(ctx.ip, address);
    if (attempt.retryAfter <= 0) return true;
    ctx.set('Retry-After', String(attempt.retryAfter));
    show(ctx, 429, page(translated(ui.t)('signup:tooMany', { seconds: attempt.retryAfter })));
    return false;
  }

  router.get('/signup', async function showSignup(ctx) {
    const open = await opened(ctx, String(ctx.query['interaction'] ?? ''));
    if (!open) return;
    show(ctx, 200, signupPage(open.ui, { csrf: csrfFor(ctx), interaction: open.interaction }));
  });

  router.post('/signup', form, async function submitSignup(ctx) {
    const open = await opened(ctx, field(ctx, 'interaction'));
    if (!open) return;
    const { ui, interaction } = open;
    if (!formValid(ctx)) return refused(ctx, ui);
    const typed = field(ctx, 'email').trim().slice(0, 320);
    const password = field(ctx, 'password');
    const again = (status: number, error: SafeHtml) =>
      show(ctx, status, signupPage(ui, { csrf: csrfFor(ctx), interaction, email: typed, error }));
    const address = email.safeParse(typed);
    if (!address.success) return again(400, translated(ui.t)('signup:invalidEmail'));
    try {
      // Before the address is looked at: a refusal here says nothing about it.
      checkPassword(password, { email: address.data });
    } catch (error) {
      if (!(error instanceof PasswordPolicyError)) throw error;
      return again(422, translated(ui.t)('signup:weakPassword', { reason: error.reason }));
    }
    const page = (error: SafeHtml) =>
      signupPage(ui, { csrf: csrfFor(ctx), interaction, email: typed, error });
    if (!(await withinLimits(ctx, address.data, page, ui))) return;

    const created = await createAccount(address.data, password);
    if (created) {
      await deps.audit.record({
        kind: 'user_created',
        subject: created.id,
        detail: { via: 'signup', ip: ctx.ip },
      });
      await mail.sendLink(created, ui, interaction);
    } else {
      const owner = await accounts.findByEmail(address.data);
      if (owner) await mail.sendTaken(owner, ui, interaction);
    }
    const hours = Math.round((selfService.emailVerificationTtl / 3600) * 10) / 10;
    show(
      ctx,
      200,
      messagePage(
        ui,
        translated(ui.t)('signup:checkMailTitle'),
        translated(ui.t)('signup:checkMail', { email: address.data, hours }),
        interaction,
      ),
    );
  });

  /** A new account, or undefined when the address is taken (after as much work as a new one). */
  async function createAccount(address: string, password: string): Promise<User | undefined> {
    if (await accounts.findByEmail(address)) {
      await hashPassword(password);
      return undefined;
    }
    try {
      return await accounts.create({
        email: address,
        password,
        emailVerified: false,
        // before-roles: none until the address is proven (then markEmailVerified gives them).
        roles: selfService.signupVerify === 'before-roles' ? [] : selfService.signupRoles,
      });
    } catch (error) {
      if (isUniqueViolation(error)) return undefined; // a sign-up of the same address won
      throw error;
    }
  }

  router.get('/signup/verify', async function showVerify(ctx) {
    const ui = deps.ui.of(ctx);
    const token = String(ctx.query['token'] ?? '');
    const uid = String(ctx.query['interaction'] ?? '');
    const interaction = INTERACTION_UID.test(uid) ? uid : undefined;
    // Only a look: mail scanners fetch links, so the address is proven by the POST.
    const grant = await deps.mail.peek(token);
    const user = grant && (await accounts.get(grant.userId));
    if (!grant || !user) {
      show(ctx, 400, resendPage(ui, { csrf: csrfFor(ctx), interaction, expired: true }));
      return;
    }
    const csrf = csrfFor(ctx);
    show(ctx, 200, verifyPage(ui, { csrf, token, email: grant.email ?? user.email, interaction }));
  });

  router.post('/signup/verify', form, async function submitVerify(ctx) {
    const ui = deps.ui.of(ctx);
    const uid = field(ctx, 'interaction');
    const interaction = INTERACTION_UID.test(uid) ? uid : undefined;
    if (!formValid(ctx)) return refused(ctx, ui);
    const grant = await deps.mail.consume(field(ctx, 'token'));
    const user = grant && (await accounts.get(grant.userId));
    // A link to an address the account no longer has proves nothing about the current one.
    if (
      !grant ||
      !user ||
      (grant.email && grant.email.toLowerCase() !== user.email.toLowerCase())
    ) {
      show(ctx, 400, resendPage(ui, { csrf: csrfFor(ctx), interaction, expired: true }));
      return;
    }
    const roles = rolesOnVerification(selfService);
    const verified = await accounts.markEmailVerified(user.id, roles);
    if (verified) {
      await deps.audit.record({
        kind: 'email_verified',
        subject: user.id,
        detail: { ip: ctx.ip, ...(roles ? { roles } : {}) },
      });
    }
    show(ctx, 200, verifiedPage(ui, interaction));
  });

  router.get('/signup/resend', function showResend(ctx) {
    const uid = String(ctx.query['interaction'] ?? '');
    const interaction = INTERACTION_UID.test(uid) ? uid : undefined;
    show(ctx, 200, resendPage(deps.ui.of(ctx), { csrf: csrfFor(ctx), interaction }));
  });

  router.post('/signup/resend', form, async function submitResend(ctx) {
    const ui = deps.ui.of(ctx);
    const uid = field(ctx, 'interaction');
    const interaction = INTERACTION_UID.test(uid) ? uid : undefined;
    if (!formValid(ctx)) return refused(ctx, ui);
    const page = (error: SafeHtml) => resendPage(ui, { csrf: csrfFor(ctx), interaction, error });
    const address = email.safeParse(field(ctx, 'email').trim().slice(0, 320));
    if (!address.success) return show(ctx, 400, page(translated(ui.t)('signup:invalidEmail')));
    if (!(await withinLimits(ctx, address.data, page, ui))) return;
    const user = await accounts.findByEmail(address.data);
    if (user && !user.emailVerifiedAt && !user.disabledAt)
      await mail.sendLink(user, ui, interaction);
    show(
      ctx,
      200,
      messagePage(
        ui,
        translated(ui.t)('signup:resentTitle'),
        translated(ui.t)('signup:resent', { email: address.data }),
        interaction,
      ),
    );
  });
}
