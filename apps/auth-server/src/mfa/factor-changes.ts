import type { AuditRepo } from '../data/audit-repo.js';
import type { RecoveryCodes } from './recovery-codes.js';

/**
 * What enrolling or removing a second factor does to the recovery codes, the same for
 * every kind (authenticator app, passkey) and every page (account page, factor step of a
 * sign-in): README "Multi-factor sign-in". Recovery codes stand in for a factor, so they
 * come with the first one and go with the last one.
 */
export interface FactorChanges {
  /**
   * After `userId` enrolled a factor (`hadFactor`: whether they had one before it): ten
   * new recovery codes, to show once, when it is their first factor (any older codes are
   * void) or they hold no unused code; undefined when their codes stand.
   */
  enrolled(userId: string, hadFactor: boolean): Promise<string[] | undefined>;
  /** After a factor was removed: with none left, the recovery codes go too. */
  removed(userId: string): Promise<void>;
}

export function createFactorChanges(deps: {
  hasSecondFactor(userId: string): Promise<boolean>;
  recoveryCodes: RecoveryCodes;
  audit: AuditRepo;
}): FactorChanges {
  return {
    async enrolled(userId, hadFactor) {
      if (hadFactor && (await deps.recoveryCodes.remaining(userId)) > 0) return undefined;
      const codes = await deps.recoveryCodes.generate(userId);
      await deps.audit.record({ kind: 'recovery_codes_generated', subject: userId });
      return codes;
    },
    async removed(userId) {
      // Left alone, they would be a way in of their own.
      if (!(await deps.hasSecondFactor(userId))) await deps.recoveryCodes.discard(userId);
    },
  };
}
