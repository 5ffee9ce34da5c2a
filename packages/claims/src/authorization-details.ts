// RFC 9396 authorization details in access tokens, and Portcullis's payment type (README
// "Payment authorization details (RFC 9396)").

/** One authorization detail (RFC 9396 §2): `type` says what the other members mean. */
export interface AuthorizationDetail {
  type: string;
  [member: string]: unknown;
}

/** The payment type: one payment of at most `amount` for `orderId`, once. */
export const PAYMENT_DETAIL_TYPE = 'urn:portcullis:payment';

/** A payment detail as the authorization server issues it. */
export interface PaymentAuthorizationDetail {
  type: typeof PAYMENT_DETAIL_TYPE;
  /** Most the payment may be, in minor units (cents), as POST /payments' `amount`. */
  amount: number;
  /** ISO 4217 code, as POST /payments' `currency`. */
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

/** A plain JSON object with a non-empty string `type` (RFC 9396 §2). */
export function isAuthorizationDetail(value: unknown): value is AuthorizationDetail {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    isText((value as { type?: unknown }).type, 256)
  );
}

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
