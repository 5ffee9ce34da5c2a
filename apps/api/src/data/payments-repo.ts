import { type Db, type PaymentAuthorizationRow, type PaymentRow } from '@portcullis/db';
import { recordEvent } from './events-repo.js';
import { completeClaim, type IdempotencyClaim, type StoredResponse } from './idempotency-repo.js';

export interface Payment {
  id: string;
  userId: string;
  orderId: string;
  amount: number;
  currency: string;
  status: 'succeeded' | 'failed';
  providerRef: string;
  createdAt: Date;
}

export interface PaymentsRepo {
  find(id: string, visibility: { ownerId?: string | undefined }): Promise<Payment | undefined>;
  /** Newest first; `after` is the id of the last payment of the previous page. */
  list(
    visibility: { ownerId?: string | undefined },
    page: { after?: string | undefined; limit: number },
  ): Promise<Payment[]>;
  /**
   * In one transaction: the payment, its event, and the idempotency record completed
   * with `response`. False (nothing written) when the claim is no longer ours.
   */
  commit(payment: Payment, claim: IdempotencyClaim, response: StoredResponse): Promise<boolean>;
  /**
   * Marks an RFC 9396 payment detail used by the payment of `claim`, in one conditional
   * insert: true when it was free or already this payment's (a retry), false when used.
   */
  useAuthorization(use: {
    authorizationId: string;
    claim: IdempotencyClaim;
    orderId: string;
    now: Date;
  }): Promise<boolean>;
}

function toPayment(row: PaymentRow): Payment {
  return {
    id: row.id,
    userId: row.user_id,
    orderId: row.order_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    providerRef: row.provider_ref,
    createdAt: row.created_at,
  };
}

export function paymentJson(payment: Payment) {
  return { ...payment, createdAt: payment.createdAt.toISOString() };
}

export function createPaymentsRepo(db: Db): PaymentsRepo {
  const visible = (visibility: { ownerId?: string | undefined }) => {
    const query = db<PaymentRow>('payments');
    if (visibility.ownerId !== undefined) query.where('user_id', visibility.ownerId);
    return query;
  };

  return {
    async find(id, visibility) {
      const row = await visible(visibility).where('id', id).first();
      return row && toPayment(row);
    },

    async list(visibility, { after, limit }) {
      const query = visible(visibility);
      if (after !== undefined) {
        // Keyset on (created_at, id), the cursor naming the last row seen.
        query.whereRaw('(created_at, id) < (select created_at, id from payments where id = ?)', [
          after,
        ]);
      }
      const rows = await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit);
      return rows.map(toPayment);
    },

    async useAuthorization({ authorizationId, claim, orderId, now }) {
      const table = () => db<PaymentAuthorizationRow>('payment_authorizations');
      const inserted = await table()
        .insert({
          authorization_id: authorizationId,
          idempotency_id: claim.id,
          subject: claim.subject,
          order_id: orderId,
          used_at: now,
        })
        .onConflict('authorization_id')
        .ignore()
        .returning('authorization_id');
      if (inserted.length > 0) return true;
      const mine = await table()
        .where({ authorization_id: authorizationId, idempotency_id: claim.id })
        .first('authorization_id');
      return mine !== undefined;
    },

    commit(payment, claim, response) {
      return db.transaction(async (trx) => {
        if (!(await completeClaim(trx, claim, response))) return false;
        await trx('payments').insert({
          id: payment.id,
          user_id: payment.userId,
          order_id: payment.orderId,
          amount: payment.amount,
          currency: payment.currency,
          status: payment.status,
          provider_ref: payment.providerRef,
          idempotency_id: claim.id,
          created_at: payment.createdAt,
        });
        await recordEvent(trx, {
          type: payment.status === 'succeeded' ? 'payment.succeeded' : 'payment.failed',
          subjectType: 'payment',
          subjectId: payment.id,
          ownerId: payment.userId,
          data: paymentJson(payment),
        });
        return true;
      });
    },
  };
}
