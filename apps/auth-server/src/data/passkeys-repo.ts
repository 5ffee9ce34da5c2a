import type { Db } from '@portcullis/db';

export type PasskeyDeviceType = 'singleDevice' | 'multiDevice';

export interface Passkey {
  /** The credential id, base64url. */
  id: string;
  userId: string;
  name: string;
  /** COSE-encoded public key. */
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
  deviceType: PasskeyDeviceType;
  backedUp: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export type NewPasskey = Omit<Passkey, 'createdAt' | 'lastUsedAt'>;

export type ChallengePurpose = 'register' | 'authenticate';

export interface IssuedChallenge {
  challenge: string;
  purpose: ChallengePurpose;
  /** What asked for it: `interaction:<uid>` or `account:<user id>`. */
  binding: string;
  userId: string | null;
}

export interface PasskeysRepo {
  listByUser(userId: string): Promise<Passkey[]>;
  find(id: string): Promise<Passkey | undefined>;
  /** false when the credential id is already registered (to anyone). */
  create(passkey: NewPasskey): Promise<boolean>;
  rename(userId: string, id: string, name: string): Promise<boolean>;
  remove(userId: string, id: string): Promise<boolean>;
  /** Removes every passkey of the user; returns how many. */
  removeAll(userId: string): Promise<number>;
  /** Records a verified use; false unless the counter moved forward (a clone, a concurrent use). */
  recordUse(
    id: string,
    use: { counter: number; deviceType: PasskeyDeviceType; backedUp: boolean },
  ): Promise<boolean>;
  /** Stores a challenge for `ttlSeconds`; a binding keeps only its `keep` newest. */
  issueChallenge(challenge: IssuedChallenge, ttlSeconds: number, keep: number): Promise<void>;
  /** Takes a matching unexpired challenge out with one DELETE ... RETURNING: handed out once. */
  consumeChallenge(
    challenge: string,
    purpose: ChallengePurpose,
    binding: string,
  ): Promise<IssuedChallenge | undefined>;
}

interface PasskeyRow {
  id: string;
  user_id: string;
  name: string;
  public_key: Uint8Array;
  counter: string | number;
  transports: string[];
  device_type: PasskeyDeviceType;
  backed_up: boolean;
  created_at: Date;
  last_used_at: Date | null;
}

const toPasskey = (row: PasskeyRow): Passkey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  publicKey: Uint8Array.from(row.public_key),
  counter: Number(row.counter),
  transports: row.transports,
  deviceType: row.device_type,
  backedUp: row.backed_up,
  createdAt: new Date(row.created_at),
  lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
});

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;

export function createPasskeysRepo(db: Db): PasskeysRepo {
  return {
    async listByUser(userId) {
      const rows = await db<PasskeyRow>('passkeys')
        .where({ user_id: userId })
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      return rows.map(toPasskey);
    },

    async find(id) {
      const row = await db<PasskeyRow>('passkeys').where({ id }).first();
      return row ? toPasskey(row) : undefined;
    },

    async create(passkey) {
      const result = await db.raw(
        `insert into passkeys (id, user_id, name, public_key, counter, transports, device_type, backed_up)
         values (?, ?, ?, ?, ?, ?::jsonb, ?, ?)
         on conflict (id) do nothing
         returning id`,
        [
          passkey.id,
          passkey.userId,
          passkey.name,
          Buffer.from(passkey.publicKey),
          passkey.counter,
          JSON.stringify(passkey.transports),
          passkey.deviceType,
          passkey.backedUp,
        ],
      );
      return rowsOf(result).length === 1;
    },

    async rename(userId, id, name) {
      const rows = await db('passkeys')
        .where({ id, user_id: userId })
        .update({ name })
        .returning('id');
      return rows.length === 1;
    },

    async remove(userId, id) {
      const rows = await db('passkeys').where({ id, user_id: userId }).del().returning('id');
      return rows.length === 1;
    },

    async removeAll(userId) {
      const rows = await db('passkeys').where({ user_id: userId }).del().returning('id');
      return rows.length;
    },

    async recordUse(id, use) {
      // A counter of 0 before and after means the authenticator keeps none (synced passkeys).
      const result = await db.raw(
        `update passkeys set counter = ?, device_type = ?, backed_up = ?, last_used_at = now()
         where id = ? and (counter < ? or (counter = 0 and ? = 0))
         returning id`,
        [use.counter, use.deviceType, use.backedUp, id, use.counter, use.counter],
      );
      return rowsOf(result).length === 1;
    },

    async issueChallenge(c, ttlSeconds, keep) {
      // Expired challenges are cleared as new ones are issued: the table stays small.
      await db.raw('delete from webauthn_challenges where expires_at < now()');
      await db.raw(
        `insert into webauthn_challenges (challenge, purpose, binding, user_id, expires_at)
         values (?, ?, ?, ?, now() + ? * interval '1 second')`,
        [c.challenge, c.purpose, c.binding, c.userId, ttlSeconds],
      );
      await db.raw(
        `delete from webauthn_challenges where binding = ? and challenge in (
           select challenge from webauthn_challenges where binding = ?
           order by expires_at desc, challenge offset ?)`,
        [c.binding, c.binding, keep],
      );
    },

    async consumeChallenge(challenge, purpose, binding) {
      const result = await db.raw(
        `delete from webauthn_challenges
         where challenge = ? and purpose = ? and binding = ? and expires_at > now()
         returning challenge, purpose, binding, user_id`,
        [challenge, purpose, binding],
      );
      const row = rowsOf<{
        challenge: string;
        purpose: ChallengePurpose;
        binding: string;
        user_id: string | null;
      }>(result)[0];
      return row
        ? {
            challenge: row.challenge,
            purpose: row.purpose,
            binding: row.binding,
            userId: row.user_id,
          }
        : undefined;
    },
  };
}
