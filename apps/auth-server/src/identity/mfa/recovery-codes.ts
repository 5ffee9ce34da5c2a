import { hash, randomBytes } from 'node:crypto';
import type { MfaRepo } from '../../data/mfa-repo.js';

/** One-time recovery codes, shown once, stored hashed (docs/security.md "Second factors"). */
export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function newCode(): string {
  const bytes = randomBytes(16);
  let code = '';
  for (let i = 0; i < 16; i++) code += ALPHABET[bytes[i]! % 32];
  return code.match(/.{4}/g)!.join('-');
}

const digest = (code: string) => hash('sha256', code.toLowerCase().replace(/[\s-]+/g, ''), 'hex');

export interface RecoveryCodes {
  /** New codes for the user (voiding any earlier ones); shown once, stored as digests. */
  generate(userId: string): Promise<string[]>;
  /** Uses one code; false when it is not one of the user's unused codes. */
  use(userId: string, code: string): Promise<boolean>;
  remaining(userId: string): Promise<number>;
  /** Deletes every code of the user, used or not. */
  discard(userId: string): Promise<void>;
}

export function createRecoveryCodes(repo: MfaRepo): RecoveryCodes {
  return {
    async generate(userId) {
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
      await repo.replaceRecoveryCodes(userId, codes.map(digest));
      return codes;
    },
    async use(userId, code) {
      if (code.length > 64) return false;
      return repo.useRecoveryCode(userId, digest(code));
    },
    remaining: (userId) => repo.countRecoveryCodes(userId),
    async discard(userId) {
      await repo.deleteRecoveryCodes(userId);
    },
  };
}
