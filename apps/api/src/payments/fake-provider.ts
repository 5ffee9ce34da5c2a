import { createHash } from 'node:crypto';
import type { ChargeRequest, ChargeResult, PaymentProvider } from './provider.js';

/**
 * FAKE payment provider — moves no money. Deterministic: an amount whose last two
 * digits are 13 is declined, any other succeeds. It dedupes by idempotency key as a
 * real PSP does (the same key returns the first result; the same key with another
 * amount, currency or reference is refused), and counts the charges it really made.
 */
export class FakePaymentProvider implements PaymentProvider {
  private readonly charges = new Map<string, { request: ChargeRequest; result: ChargeResult }>();
  /** Every call, retries included. */
  calls = 0;

  /** Distinct charges made (calls minus idempotent retries). */
  get chargeCount(): number {
    return this.charges.size;
  }

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    this.calls += 1;
    const previous = this.charges.get(request.idempotencyKey);
    if (previous) {
      const same =
        previous.request.amount === request.amount &&
        previous.request.currency === request.currency &&
        previous.request.reference === request.reference;
      if (!same) throw new Error('fake provider: idempotency key reused with other parameters');
      return previous.result;
    }
    const digest = createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 24);
    const result: ChargeResult = {
      providerRef: `fake_ch_${digest}`,
      status: request.amount % 100 === 13 ? 'failed' : 'succeeded',
    };
    this.charges.set(request.idempotencyKey, { request: { ...request }, result });
    return result;
  }
}
