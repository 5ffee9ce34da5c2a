/** What the API needs of a PSP: `charge` is idempotent by `idempotencyKey`, as Stripe's is. */
export interface ChargeRequest {
  idempotencyKey: string;
  /** Minor units (cents), positive. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  reference: string;
}

export interface ChargeResult {
  providerRef: string;
  status: 'succeeded' | 'failed';
}

export interface PaymentProvider {
  charge(request: ChargeRequest): Promise<ChargeResult>;
}
