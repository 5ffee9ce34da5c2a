import { z } from 'zod';
import type { User } from './accounts-repo.js';

/** SIGNUP_VERIFY: what an unproven address may do (README "Sign-up"). */
export const SIGNUP_VERIFY = ['before-sign-in', 'before-roles'] as const;
export type SignupVerify = (typeof SIGNUP_VERIFY)[number];

/** Parsed by every app with a sign-in door, so all apply one rule. */
export const signupVerifyVariables = {
  /** before-sign-in: an unverified address cannot sign in; before-roles: it signs in without roles. */
  SIGNUP_VERIFY: z.enum(SIGNUP_VERIFY).default('before-sign-in'),
};

/** Whether a door must refuse `user` until the address is proven (docs/security.md "Doors"). */
export function awaitsVerification(
  user: Pick<User, 'emailVerifiedAt'>,
  policy: SignupVerify,
): boolean {
  return policy === 'before-sign-in' && user.emailVerifiedAt === null;
}
