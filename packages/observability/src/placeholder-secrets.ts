// Placeholder secrets (CHANGE_ME…) are refused in production (README "Deploying").

/** The shortest secret accepted in production: 32 characters (`openssl rand -base64 32` gives 44). */
export const MIN_SECRET_LENGTH = 32;

/** The words a placeholder is made of: CHANGE_ME, change-me, changeme, example, replace-me… */
const PLACEHOLDER =
  /change[\W_]*me|example|placeholder|replace[\W_]*me|fill[\W_]*me|your[\W_]*(secret|token|key|password)|<[^>]*>/i;

export interface SecretProblem {
  name: string;
  message: string;
}

const GENERATE = 'generate one with `openssl rand -base64 32`';

function problemOf(value: string): string | undefined {
  if (PLACEHOLDER.test(value)) return `is a placeholder; ${GENERATE}`;
  if (value.length < MIN_SECRET_LENGTH) {
    return `is shorter than ${MIN_SECRET_LENGTH} characters; ${GENERATE}`;
  }
  return undefined;
}

/** Lists are checked key by key; a URL only by its password, and only for placeholder words. */
export function placeholderSecrets(
  env: Readonly<Record<string, unknown>>,
  names: readonly string[],
): SecretProblem[] {
  const problems: SecretProblem[] = [];
  for (const name of names) {
    const value = env[name];
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? URL.parse(text) : null;
    if (url) {
      const password = decodeURIComponent(url.password);
      if (PLACEHOLDER.test(password)) {
        problems.push({ name, message: `has a placeholder password; ${GENERATE}` });
      }
      continue;
    }
    const message =
      text === ''
        ? `is empty; ${GENERATE}`
        : text
            .split(',')
            .map((part) => problemOf(part.trim()))
            .find(Boolean);
    if (message) problems.push({ name, message });
  }
  return problems;
}
