import { awaitsVerification, type AccountsRepo, type SignupVerify } from '@portcullis/accounts';
import type { Middleware } from 'koa';
import { AuthServerError } from '../../kernel/errors.js';
import { page } from '../interactions/views.js';
import { markup, translated } from '../ui/html.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import type { UiFactory } from '../ui/index.js';
import { INTERACTION_UID } from './signup-mail.js';

/** The right credential of an account whose address is not proven yet (SIGNUP_VERIFY=before-sign-in). */
export class UnverifiedAddressError extends AuthServerError {
  constructor() {
    super(
      'Verify your e-mail address first: open the link we mailed you. No mail? Ask for a new link at /signup/resend.',
      { status: 403, expose: true },
    );
  }
}

/** Renders UnverifiedAddressError in the page's language, with the way to a new link. */
export function unverifiedAddressPage(ui: UiFactory): Middleware {
  return async function renderUnverifiedAddress(ctx, next) {
    try {
      await next();
    } catch (error) {
      if (!(error instanceof UnverifiedAddressError)) throw error;
      const pageUi = ui.of(ctx);
      const t = translated(pageUi.t);
      const uid = /^\/interaction\/([^/]+)/.exec(ctx.path)?.[1] ?? '';
      const query = INTERACTION_UID.test(uid) ? `?interaction=${uid}` : '';
      htmlHeaders(ctx, [], { ui: pageUi });
      ctx.status = error.status;
      ctx.type = 'html';
      ctx.body = page(
        pageUi,
        t('signup:unverifiedTitle'),
        markup`<p class="error" role="alert">${t('signup:unverified')}</p>
<p><a href="/signup/resend${query}">${t('signup:resendTitle')}</a></p>`,
      ).toString();
    }
  };
}

/** Throws UnverifiedAddressError when `accountId` may not sign in yet (docs/security.md "Doors"). */
export function verifiedAddressCheck(
  accounts: Pick<AccountsRepo, 'get'>,
  policy: SignupVerify,
): (accountId: string) => Promise<void> {
  return async function requireVerifiedAddress(accountId) {
    const user = await accounts.get(accountId);
    if (user && awaitsVerification(user, policy)) throw new UnverifiedAddressError();
  };
}

/**
 * Whether sign-up is offered: SIGNUP=open, unless the client of the sign-in says
 * `signup: false` (POST /admin/clients). The sign-in page links to /signup when true.
 */
export function signupOffered(
  selfService: { signup: 'off' | 'open' },
  clientMetadata?: Record<string, unknown> | undefined,
): boolean {
  return selfService.signup === 'open' && clientMetadata?.['signup'] !== false;
}

/** Roles a proven address brings: the sign-up roles under SIGNUP_VERIFY=before-roles, else none change. */
export function rolesOnVerification(selfService: {
  signupVerify: 'before-sign-in' | 'before-roles';
  signupRoles: string[];
}): string[] | undefined {
  return selfService.signupVerify === 'before-roles' ? selfService.signupRoles : undefined;
}
