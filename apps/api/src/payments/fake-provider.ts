import { createHash } from 'node:crypto';
import type { ChargeRequest, ChargeResult, PaymentProvider } from './provider.js';

/** How many idempotency keys the fake remembers, newest first: a real PSP forgets keys too. */
export const FAKE_PROVIDER_KEYS = 10_000;

/** FAKE payment provider: moves no money; amounts ending in 13 are declined; dedupes by key. */
export class FakePaymentProvider implements PaymentProvider {
  private readonly charges = new Map<string, { request: ChargeRequest; result: ChargeResult }>();
  calls = 0;
  chargeCount = 0;

  constructor(private readonly maxKeys = FAKE_PROVIDER_KEYS) {}

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
    if (this.charges.size >= this.maxKeys) this.charges.delete(this.charges.keys().next().value!);
    this.charges.set(request.idempotencyKey, { request: { ...request }, result });
    return result;
  }
}
