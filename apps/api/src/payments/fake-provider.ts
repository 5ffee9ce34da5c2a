import { createHash } from 'node:crypto';
import type { ChargeRequest, ChargeResult, PaymentProvider } from './provider.js';

/**
 * How many idempotency keys the fake remembers, newest first (about 0.9 kB each). A real
 * PSP forgets keys too (after about a day); a retry that matters comes within seconds,
 * and the API answers later ones from its own payments table without calling the
 * provider. Unbounded, the keys grew the API's heap by 86 MB per 100,000 payments.
 */
export const FAKE_PROVIDER_KEYS = 10_000;

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
  chargeCount = 0;

  constructor(private readonly maxKeys = FAKE_PROVIDER_KEYS) {}

  /** Idempotency keys remembered now. */
  get keysHeld(): number {
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
    this.chargeCount += 1;
    // A Map iterates in insertion order: the first key is the oldest.
    if (this.charges.size >= this.maxKeys) this.charges.delete(this.charges.keys().next().value!);
    this.charges.set(request.idempotencyKey, { request: { ...request }, result });
    return result;
  }
}
