// The demo shop's RFC 9396 payment type (README "Payment authorization details (RFC 9396)").
import type { AuthorizationDetail } from '@portcullis/claims';

/** The payment type: one payment of at most `amount` for `orderId`, once. */
export const PAYMENT_DETAIL_TYPE = 'urn:portcullis:payment';

/** A payment detail as the authorization server issues it. */
export interface PaymentAuthorizationDetail {
  type: typeof PAYMENT_DETAIL_TYPE;
  /** Most the payment may be, in minor units (cents). */
  amount: number;
  /** ISO 4217 code. */
  currency: string;
  /** The order paid for: the payee of a payment in this API. */
  orderId: string;
  /** Set by the authorization server at consent: the payment it allows is recorded under it. */
  authorizationId: string;
  locations?: string[];
}

const CURRENCY = /^[A-Z]{3}$/;
const MAX_AMOUNT = 1_000_000_000_000;
const isText = (v: unknown, max = 200) => typeof v === 'string' && v.length >= 1 && v.length <= max;

/** The detail when it is a well-formed payment detail, else undefined (another type, or malformed). */
export function paymentDetailOf(
  detail: AuthorizationDetail,
): PaymentAuthorizationDetail | undefined {
  if (detail.type !== PAYMENT_DETAIL_TYPE) return undefined;
  const { amount, currency, orderId, authorizationId, locations } = detail;
  const ok =
    typeof amount === 'number' &&
    Number.isSafeInteger(amount) &&
    amount >= 1 &&
    amount <= MAX_AMOUNT &&
    typeof currency === 'string' &&
    CURRENCY.test(currency) &&
    isText(orderId) &&
    isText(authorizationId) &&
    (locations === undefined ||
      (Array.isArray(locations) && locations.every((l) => isText(l, 2048))));
  return ok ? (detail as unknown as PaymentAuthorizationDetail) : undefined;
}
