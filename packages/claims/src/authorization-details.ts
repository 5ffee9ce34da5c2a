// RFC 9396 authorization details in access tokens: the shape only; what a type means, and
// whether a token's detail allows a request, is the resource server's to define and check.

/** One authorization detail (RFC 9396 §2): `type` says what the other members mean. */
export interface AuthorizationDetail {
  type: string;
  [member: string]: unknown;
}

const isText = (v: unknown, max: number) =>
  typeof v === 'string' && v.length >= 1 && v.length <= max;

/** A plain JSON object with a non-empty string `type` (RFC 9396 §2). */
export function isAuthorizationDetail(value: unknown): value is AuthorizationDetail {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    isText((value as { type?: unknown }).type, 256)
  );
}
