export { createAccountsRepo, type AccountsRepo, type NewUser, type User } from './accounts-repo.js';
export { hashPassword, verifyPassword, passwordHashing, ARGON2_OPTIONS } from './passwords.js';
export {
  PasswordPolicyError,
  checkPassword,
  PASSWORD_MIN,
  PASSWORD_MAX,
} from './password-policy.js';
