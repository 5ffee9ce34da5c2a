/**
 * What the API needs of a payment service provider (PSP). Like Stripe's or Adyen's
 * APIs, `charge` is idempotent by `idempotencyKey`: a retry with the same key returns
 * the first result and never charges twice. The API passes a key derived from the
 * caller's Idempotency-Key, so a crash between the charge and the commit of the
 * payment is repaired by simply calling again.
 */
export interface ChargeRequest {
  idempotencyKey: string;
  /** Minor units (cents), positive. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** Our reference for the charge (the order id). */
  reference: string;
}

export interface ChargeResult {
  providerRef: string;
  status: 'succeeded' | 'failed';
}

export interface PaymentProvider {
  charge(request: ChargeRequest): Promise<ChargeResult>;
}
