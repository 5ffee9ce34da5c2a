import { errors, type Client, type KoaContextWithOIDC } from 'oidc-provider';

/** How a client authenticates at /token: a secret (stored hashed), its own key, or none (PKCE). */
export const CLIENT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
] as const;

/** Signing algorithms of a private_key_jwt client assertion: asymmetric only. */
export const CLIENT_ASSERTION_ALGS = ['ES256', 'PS256', 'RS256'] as const;

/**
 * Opts one client into RFC 7523's first audiences
 * (docs/security.md "Client assertions: the audience and the legacy opt-in").
 */
export const LEGACY_AUDIENCE = 'client_assertion_legacy_audience';

/** oidc-provider's clockTolerance (its default): the leeway it gives `exp` and `nbf`. */
const CLOCK_TOLERANCE = 15;

/** Whether this client accepts the legacy audiences (never a FAPI 2.0 client: fapi.ts). */
export function allowsLegacyAudience(client: Client | undefined): boolean {
  return client?.metadata()[LEGACY_AUDIENCE] === true;
}

/** A refused client assertion whose `error_description` names the rule it broke. */
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

/** RFC 7523bis: `aud` is the issuer alone (unless opted out); `exp` is near. */
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
