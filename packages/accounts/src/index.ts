export {
  createAccountsRepo,
  toUser,
  type AccountsRepo,
  type NewUser,
  type PasswordSignIn,
  type User,
} from './accounts-repo.js';
export { hashPassword, verifyPassword, passwordHashing, ARGON2_OPTIONS } from './passwords.js';
export {
  PasswordPolicyError,
  checkPassword,
  PASSWORD_MIN,
  PASSWORD_MAX,
  PASSWORD_MIN_SCORE,
} from './password-policy.js';
export {
  awaitsVerification,
  signupVerifyVariables,
  SIGNUP_VERIFY,
  type SignupVerify,
} from './email-verification.js';
export {
  createAttemptLimiter,
  createSignInLimiter,
  signInLimitsOf,
  signInLimitVariables,
  LimiterUnavailableError,
  waitForRedis,
  type Attempt,
  type AttemptLimiter,
  type AttemptRule,
  type AttemptStore,
  type CheckedAttempt,
  type SignInLimiter,
  type SignInLimits,
} from './attempt-limiter.js';
export {
  createAccountTokens,
  type AccountTokens,
  type IssuedToken,
  type TokenGrant,
  type TokenPurpose,
} from './account-tokens.js';
