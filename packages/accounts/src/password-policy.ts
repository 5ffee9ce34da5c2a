import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as english from '@zxcvbn-ts/language-en';

export const PASSWORD_MIN = 8;
/** Upper bound keeps a hash request from becoming a CPU/memory denial of service. */
export const PASSWORD_MAX = 1024;
/** zxcvbn's score (0–4) a password must reach: 3 is "safely unguessable" online and offline-slow. */
export const PASSWORD_MIN_SCORE = 3;
/** zxcvbn reads at most this many characters: its matching grows with length (docs/security.md). */
const ESTIMATE_LENGTH = 64;
/** l33t variants tried per word: zxcvbn's 100 costs ~0.3 s on 64 characters, 5 about 20 ms. */
const L33T_SUBSTITUTIONS = 5;

/** Thrown for a password outside policy; callers render it as 422 `{fields: {password}}`. */
export class PasswordPolicyError extends Error {
  readonly code = 'invalid_password';
  readonly field = 'password';
  /** Why, as a clause a page can follow "Choose another password:" with. */
  readonly reason: string;
  constructor(message: string, reason: string = message) {
    super(message);
    this.name = 'PasswordPolicyError';
    this.reason = reason;
  }
}

// Built once on first use: the dictionaries take a moment to rank.
let estimator: ZxcvbnFactory | undefined;
const estimate = () =>
  (estimator ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...english.dictionary },
    graphs: common.adjacencyGraphs,
    translations: english.translations,
    maxLength: ESTIMATE_LENGTH,
    l33tMaxSubstitutions: L33T_SUBSTITUTIONS,
  }));

/** What of an address a password must not be built from: the whole, its local part, its domain words. */
function inputsOf(email: string | undefined): string[] {
  if (!email) return [];
  const lower = email.trim().toLowerCase();
  const [local = '', domain = ''] = lower.split('@');
  return [lower, local, ...local.split(/[._+-]/), ...domain.split('.')].filter((s) => s.length > 2);
}

/**
 * NIST SP 800-63B §3.1.1.2: a length, no composition rules, and no known-bad value
 * (common passwords, dictionary words, the user's own address), judged by zxcvbn.
 */
export function checkPassword(
  password: string,
  context: { email?: string | undefined } = {},
): void {
  // Length in code points, so a password of emoji is measured as a person would count it.
  const length = [...password].length;
  if (length < PASSWORD_MIN) {
    throw new PasswordPolicyError(`password must be at least ${PASSWORD_MIN} characters`);
  }
  if (length > PASSWORD_MAX) {
    throw new PasswordPolicyError(`password must be at most ${PASSWORD_MAX} characters`);
  }
  const result = estimate().check(password.slice(0, ESTIMATE_LENGTH), inputsOf(context.email));
  const [only] = result.sequence;
  const known = result.sequence.length === 1 && only?.pattern === 'dictionary';
  if (result.score < PASSWORD_MIN_SCORE || known) {
    const why = (result.feedback.warning ?? 'It is easy to guess.').replace(/\.$/, '');
    const reason = `${why.charAt(0).toLowerCase()}${why.slice(1)}`;
    throw new PasswordPolicyError(
      `password is too easy to guess: ${reason}; a few unrelated words make a strong one`,
      reason,
    );
  }
}
