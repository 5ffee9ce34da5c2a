import type { AuditRepo } from '../../data/audit-repo.js';
import type { RecoveryCodes } from './recovery-codes.js';

/** Recovery codes come with the first factor and go with the last, for every kind and page. */
export interface FactorChanges {
  /** After an enrolment: new codes to show once, for a first factor or when none is left unused. */
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
