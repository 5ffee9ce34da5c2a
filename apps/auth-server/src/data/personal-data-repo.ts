import { randomUUID } from 'node:crypto';
import type { Db } from '@portcullis/db';

/** What the API keeps of a user in the shared database (migrations 004 and 006). */
export interface BusinessRecords {
  orders: Record<string, unknown>[];
  payments: Record<string, unknown>[];
}

/** A closed account's outcome: the tombstone that now owns its business records. */
export interface Closure {
  tombstone: string;
  orders: number;
  payments: number;
}

/** The user's orders and payments (download), and closing an account (docs/security.md "Closing an account"). */
export interface PersonalDataRepo {
  businessRecords(userId: string): Promise<BusinessRecords>;
  /**
   * In one transaction: orders, payments, events and uploads pass to a tombstone id, the
   * API's idempotency records and oidc-provider's artifacts of the user go, and the user row
   * goes (its factors, mailed tokens, API sessions and keys with it). The audit trail stays.
   */
  close(userId: string): Promise<Closure | undefined>;
}

export function createPersonalDataRepo(db: Db): PersonalDataRepo {
  return {
    async businessRecords(userId) {
      const [orders, payments] = await Promise.all([
        db('orders')
          .where({ user_id: userId })
          .orderBy('created_at')
          .select('id', 'customer', 'status', 'amount', 'currency', 'items', 'note')
          .select('created_at', 'updated_at'),
        db('payments')
          .where({ user_id: userId })
          .orderBy('created_at')
          .select('id', 'order_id', 'amount', 'currency', 'status', 'created_at'),
      ]);
      const amount = (r: Record<string, unknown>) => ({ ...r, amount: Number(r['amount']) });
      return { orders: orders.map(amount), payments: payments.map(amount) };
    },

    async close(userId) {
      const tombstone = `closed:${randomUUID()}`;
      return db.transaction(async (trx) => {
        const gone = await trx('users').where({ id: userId }).del().returning('id');
        if (gone.length === 0) return undefined;
        const orders = await trx('orders')
          .where({ user_id: userId })
          .update({ user_id: tombstone })
          .returning('id');
        const payments = await trx('payments')
          .where({ user_id: userId })
          .update({ user_id: tombstone })
          .returning('id');
        await trx('events').where({ owner_id: userId }).update({ owner_id: tombstone });
        await trx('uploads').where({ owner_id: userId }).update({ owner_id: tombstone });
        await trx('idempotency_keys').where({ subject: userId }).del();
        await trx('oidc_payloads').whereRaw(`payload->>'accountId' = ?`, [userId]).del();
        return { tombstone, orders: orders.length, payments: payments.length };
      });
    },
  };
}
