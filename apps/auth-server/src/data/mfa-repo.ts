import type { Db } from '@portcullis/db';

/** A user's authenticator app (RFC 6238), its secret still sealed. */
export interface TotpRecord {
  userId: string;
  secretEnc: string;
  createdAt: Date;
  /** Null while the enrolment waits for its first valid code. */
  confirmedAt: Date | null;
  /** Digest of what started the enrolment in progress (TotpService); null once confirmed. */
  enrolmentOwner: string | null;
  lastUsedAt: Date | null;
}

export interface MfaRepo {
  /** Starts (or restarts) `owner`'s enrolment; false when the user has a confirmed app. */
  startTotp(userId: string, secretEnc: string, owner: string): Promise<boolean>;
  findTotp(userId: string): Promise<TotpRecord | undefined>;
  /** Accepts a code of `step` in one conditional UPDATE, only past the last one: used once. */
  useTotpStep(userId: string, step: number, pendingOwner?: string): Promise<boolean>;
  deleteTotp(userId: string): Promise<boolean>;
  /** Replaces every recovery code of the user with these digests (one transaction). */
  replaceRecoveryCodes(userId: string, digests: string[]): Promise<void>;
  /** Marks the unused code with this digest used; false when there is none. */
  useRecoveryCode(userId: string, digest: string): Promise<boolean>;
  /** Recovery codes not yet used. */
  countRecoveryCodes(userId: string): Promise<number>;
  deleteRecoveryCodes(userId: string): Promise<number>;
}

interface TotpRow {
  user_id: string;
  secret_enc: string;
  created_at: Date;
  confirmed_at: Date | null;
  last_used_step: string | number | null;
  last_used_at: Date | null;
  enrolment_owner: string | null;
}

export function createMfaRepo(db: Db): MfaRepo {
  return {
    async startTotp(userId, secretEnc, owner) {
      const rows = await db('mfa_totp')
        .insert({ user_id: userId, secret_enc: secretEnc, enrolment_owner: owner })
        .onConflict('user_id')
        .merge({
          secret_enc: secretEnc,
          enrolment_owner: owner,
          created_at: db.fn.now(),
          last_used_step: null,
        })
        .where('mfa_totp.confirmed_at', null)
        .returning('user_id');
      return rows.length > 0;
    },
    async findTotp(userId) {
      const row = await db<TotpRow>('mfa_totp').where({ user_id: userId }).first();
      return (
        row && {
          userId: row.user_id,
          secretEnc: row.secret_enc,
          createdAt: row.created_at,
          confirmedAt: row.confirmed_at,
          enrolmentOwner: row.enrolment_owner,
          lastUsedAt: row.last_used_at,
        }
      );
    },
    async useTotpStep(userId, step, pendingOwner) {
      const rows = await db('mfa_totp')
        .where({ user_id: userId })
        .where((q) =>
          pendingOwner === undefined
            ? q.whereNotNull('confirmed_at')
            : q.whereNull('confirmed_at').where({ enrolment_owner: pendingOwner }),
        )
        .where((q) => q.whereNull('last_used_step').orWhere('last_used_step', '<', step))
        .update({
          last_used_step: step,
          last_used_at: db.fn.now(),
          ...(pendingOwner === undefined
            ? {}
            : { confirmed_at: db.fn.now(), enrolment_owner: null }),
        })
        .returning('user_id');
      return rows.length > 0;
    },
    async deleteTotp(userId) {
      const rows = await db('mfa_totp').where({ user_id: userId }).del().returning('user_id');
      return rows.length > 0;
    },
    async replaceRecoveryCodes(userId, digests) {
      await db.transaction(async (trx) => {
        await trx('mfa_recovery_codes').where({ user_id: userId }).del();
        await trx('mfa_recovery_codes').insert(
          digests.map((code_hash) => ({ user_id: userId, code_hash })),
        );
      });
    },
    async useRecoveryCode(userId, digest) {
      const rows = await db('mfa_recovery_codes')
        .where({ user_id: userId, code_hash: digest })
        .whereNull('used_at')
        .update({ used_at: db.fn.now() })
        .returning('user_id');
      return rows.length > 0;
    },
    async countRecoveryCodes(userId) {
      const row = await db('mfa_recovery_codes')
        .where({ user_id: userId })
        .whereNull('used_at')
        .count<{ n: string | number }[]>({ n: '*' })
        .first();
      return Number(row?.n ?? 0);
    },
    async deleteRecoveryCodes(userId) {
      const rows = await db('mfa_recovery_codes')
        .where({ user_id: userId })
        .del()
        .returning('user_id');
      return rows.length;
    },
  };
}
