import { awaitsVerification, type AccountsRepo, type SignupVerify } from '@portcullis/accounts';
import { AuthServerError } from '../errors.js';

/** The right credential of an account whose address is not proven yet (SIGNUP_VERIFY=before-sign-in). */
export class UnverifiedAddressError extends AuthServerError {
  constructor() {
    super(
      'Verify your e-mail address first: open the link we mailed you. No mail? Ask for a new link at /signup/resend.',
      { status: 403, expose: true },
    );
  }
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
