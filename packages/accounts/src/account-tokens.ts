import { createHash, randomBytes } from 'node:crypto';
import type { Db, DbTransaction } from '@portcullis/db';

/** What a mailed link or code is for; each is checked against its own purpose only. */
export type TokenPurpose =
  | 'password_reset'
  | 'email_verification'
  | 'email_change'
  /** The old address's link that cancels a pending e-mail change. */
  | 'email_change_cancel';

export interface IssuedToken {
  /** The secret that goes in the mail; only its digest is stored. */
  token: string;
  expiresAt: Date;
}

export interface TokenGrant {
  userId: string;
  /** The address the token was mailed to (a new address, for an e-mail change). */
  email: string | null;
}

export interface AccountTokens {
  /** A new single-use token; earlier unused ones of the same user and purpose stop working. */
  issue(input: {
    purpose: TokenPurpose;
    userId: string;
    email?: string | undefined;
    ttlSeconds: number;
    /** The caller's transaction: the token commits with what carries it (its queued mail). */
    trx?: DbTransaction | undefined;
  }): Promise<IssuedToken>;
  /** What an unused, unexpired token grants, without using it (a GET that shows a form). */
  peek(purpose: TokenPurpose, token: string): Promise<TokenGrant | undefined>;
  /** Uses the token (one conditional UPDATE: of two racing uses, one wins). */
  consume(purpose: TokenPurpose, token: string): Promise<TokenGrant | undefined>;
  /** Ends every unused token of the user for `purpose` (all purposes when omitted). */
  revoke(userId: string, purpose?: TokenPurpose): Promise<void>;
}

const digest = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A token is 32 random bytes, base64url: far beyond guessing within any lifetime. */
const wellFormed = (token: string) => /^[A-Za-z0-9_-]{43}$/.test(token);

export function createAccountTokens(db: Db, now: () => number = Date.now): AccountTokens {
  const at = () => new Date(now());
  const live = (purpose: TokenPurpose, token: string) =>
    db('account_tokens')
      .where({ token_hash: digest(token), purpose })
      .whereNull('used_at')
      .where('expires_at', '>', at());
  const grantOf = (row: { user_id: string; email: string | null } | undefined) =>
    row ? { userId: row.user_id, email: row.email } : undefined;

  return {
    async issue({ purpose, userId, email, ttlSeconds, trx: outer }) {
      const token = randomBytes(32).toString('base64url');
      const expiresAt = new Date(now() + ttlSeconds * 1000);
      await (outer ?? db).transaction(async (trx) => {
        await trx('account_tokens')
          .where({ user_id: userId, purpose })
          .whereNull('used_at')
          .update({ used_at: at() });
        await trx('account_tokens').insert({
          token_hash: digest(token),
          purpose,
          user_id: userId,
          email: email ?? null,
          expires_at: expiresAt,
        });
      });
      return { token, expiresAt };
    },

    async peek(purpose, token) {
      if (!wellFormed(token)) return undefined;
      return grantOf(await live(purpose, token).first('user_id', 'email'));
    },

    async consume(purpose, token) {
      if (!wellFormed(token)) return undefined;
      const [row] = await live(purpose, token)
        .update({ used_at: at() })
        .returning(['user_id', 'email']);
      return grantOf(row as { user_id: string; email: string | null } | undefined);
    },

    async revoke(userId, purpose) {
      const query = db('account_tokens').where({ user_id: userId }).whereNull('used_at');
      if (purpose) query.where({ purpose });
      await query.update({ used_at: at() });
    },
  };
}
