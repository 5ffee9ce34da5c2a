import { errors, type Client, type KoaContextWithOIDC } from 'oidc-provider';

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
 * Client metadata opting one client into the audiences RFC 7523 first allowed (the token
 * endpoint URL, the URL of the endpoint called): docs/security.md states the risk.
 */
export const LEGACY_AUDIENCE = 'client_assertion_legacy_audience';

/** Default of CLIENT_ASSERTION_MAX_LIFETIME: Authlib's PrivateKeyJWT signs `exp` an hour ahead. */
export const DEFAULT_MAX_ASSERTION_LIFETIME = 60 * 60;

/** oidc-provider's clockTolerance (its default): the leeway it gives `exp` and `nbf`. */
const CLOCK_TOLERANCE = 15;

/** Whether this client accepts the legacy audiences (never a FAPI 2.0 client: fapi.ts). */
export function allowsLegacyAudience(client: Client | undefined): boolean {
  return client?.metadata()[LEGACY_AUDIENCE] === true;
}

/**
 * A refused client assertion whose `error_description` names the rule it broke, so an
 * integrator can fix the client in one try (README "private_key_jwt").
 */
export class ClientAssertionRefused extends errors.InvalidClientAuth {
  constructor(description: string) {
    super(description);
    this.error_description = description;
  }
}

/** The description of a wrong `aud`, for this client (refusal-descriptions.ts uses it too). */
export function audienceRule(ctx: KoaContextWithOIDC): string {
  return allowsLegacyAudience(ctx.oidc.client)
    ? 'client assertion audience (aud) must be the issuer identifier, the token endpoint URL or the URL of the endpoint called'
    : `client assertion audience (aud) must be the issuer identifier ${ctx.oidc.issuer} as one string`;
}

export const lifetimeRule = (maxLifetime: number) =>
  `client assertion lifetime: exp must be at most ${maxLifetime} seconds ahead`;

/**
 * oidc-provider checks signature, iss, sub, jti (once, through ReplayDetection, kept until
 * `exp`) and that `aud` is the issuer, the token endpoint URL or the endpoint's URL.
 * RFC 7523bis (draft-ietf-oauth-rfc7523bis) narrows `aud` to the issuer identifier as a
 * single string, so an assertion made for another server's endpoint cannot be replayed
 * here, unless the client opted into the legacy audiences; an `exp` more than
 * CLIENT_ASSERTION_MAX_LIFETIME ahead is refused (README "private_key_jwt").
 */
export function clientAssertionCheck(maxLifetime: number) {
  return async function assertClientAssertion(
    ctx: KoaContextWithOIDC,
    claims: Record<string, unknown>,
  ): Promise<void> {
    if (!allowsLegacyAudience(ctx.oidc.client) && claims['aud'] !== ctx.oidc.issuer) {
      throw new ClientAssertionRefused(audienceRule(ctx));
    }
    const exp = claims['exp'];
    const now = Math.floor(Date.now() / 1000);
    if (typeof exp !== 'number' || exp - now > maxLifetime + CLOCK_TOLERANCE) {
      throw new ClientAssertionRefused(lifetimeRule(maxLifetime));
    }
  };
}
