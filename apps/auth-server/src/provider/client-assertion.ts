import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * How a client may authenticate at the token endpoint: a secret (stored as its SHA-256),
 * its own key (README "private_key_jwt"), or not at all (a public client, with PKCE).
 */
export const CLIENT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
] as const;

/** Signing algorithms of a private_key_jwt client assertion: asymmetric only. */
export const CLIENT_ASSERTION_ALGS = ['ES256', 'PS256', 'RS256'] as const;

/**
 * Longest accepted `exp - now` of a client assertion, seconds. A client signs one per
 * request (openid-client gives 60 s); a far-future one would be a long-lived credential.
 */
export const MAX_ASSERTION_LIFETIME = 5 * 60;

/**
 * oidc-provider checks signature, iss, sub, jti (once, through ReplayDetection) and that
 * `aud` is the issuer, the token endpoint URL or the endpoint's URL. RFC 7523bis
 * (draft-ietf-oauth-rfc7523bis) narrows `aud` to the issuer identifier as a single
 * string, so an assertion made for another server's endpoint cannot be replayed here;
 * and an `exp` far ahead is refused (README "private_key_jwt").
 */
export async function assertClientAssertion(
  ctx: KoaContextWithOIDC,
  claims: Record<string, unknown>,
): Promise<void> {
  if (claims['aud'] !== ctx.oidc.issuer) {
    throw new errors.InvalidClientAuth('audience (aud) must be the issuer identifier, a string');
  }
  const exp = claims['exp'];
  const now = Math.floor(Date.now() / 1000);
  if (typeof exp !== 'number' || exp - now > MAX_ASSERTION_LIFETIME) {
    throw new errors.InvalidClientAuth(
      `expiration (exp) must be within ${MAX_ASSERTION_LIFETIME} seconds`,
    );
  }
}
