export const PASSWORD_MIN = 8;
/** Upper bound keeps a hash request from becoming a CPU/memory denial of service. */
export const PASSWORD_MAX = 1024;

/** Thrown for a password outside policy; callers render it as 422 `{fields: {password}}`. */
export class PasswordPolicyError extends Error {
  readonly code = 'invalid_password';
  readonly field = 'password';
  constructor(message: string) {
    super(message);
    this.name = 'PasswordPolicyError';
  }
}

export function checkPassword(password: string): void {
  // Length in code points, so a password of emoji is measured as a person would count it.
  const length = [...password].length;
  if (length < PASSWORD_MIN) {
    throw new PasswordPolicyError(`password must be at least ${PASSWORD_MIN} characters`);
  }
  if (length > PASSWORD_MAX) {
    throw new PasswordPolicyError(`password must be at most ${PASSWORD_MAX} characters`);
  }
}
