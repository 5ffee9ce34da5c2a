import {
  createAccessTokenVerifier,
  createLocalKeySet,
  type AccessTokenClaims,
  type AccessTokenVerifier,
  type DenyList,
} from '@portcullis/claims';
import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { KeyRing } from './keys.js';

/** The rule of README "Token introspection": resource servers registered for it. */
export function mayIntrospect(client: unknown): boolean {
  return (client as { introspection?: unknown } | undefined)?.introspection === true;
}

const PUBLIC_MEMBERS = ['kty', 'kid', 'alg', 'use', 'key_ops', 'crv', 'x', 'y', 'n', 'e'];

/** The ring's public keys: verification needs nothing else. */
function publicJwks(keys: KeyRing): { keys: object[] } {
  return {
    keys: keys.jwks.map((jwk) =>
      Object.fromEntries(
        Object.entries(jwk as Record<string, unknown>).filter(([k]) => PUBLIC_MEMBERS.includes(k)),
      ),
    ),
  };
}

export interface JwtIntrospectionOptions {
  issuer: string;
  apiAudience: string;
  keys: KeyRing;
  denyList: Pick<DenyList, 'isDenied'>;
}

/** The API's own check of its access tokens (packages/claims) against this server's key ring. */
export function createApiTokenVerifier(options: JwtIntrospectionOptions): AccessTokenVerifier {
  return createAccessTokenVerifier({
    issuer: options.issuer,
    audience: options.apiAudience,
    keys: createLocalKeySet(publicJwks(options.keys)),
    denyList: options.denyList,
  });
}

/** RFC 7662 §2.2 members of an active API access token. */
function activeResponse(claims: AccessTokenClaims, issuer: string): Record<string, unknown> {
  const c = claims as AccessTokenClaims & Record<string, unknown>;
  return {
    active: true,
    iss: issuer,
    sub: c.sub,
    client_id: c['client_id'],
    scope: c['scope'],
    aud: c.aud,
    exp: c.exp,
    iat: c.iat,
    jti: c['jti'],
    token_type: c['cnf'] ? 'DPoP' : 'Bearer',
    ...(c['cnf'] ? { cnf: c['cnf'] } : {}),
  };
}

/** 403 for unregistered clients; the API's JWTs (docs/architecture.md "Provider extensions"). */
export function introspectApiJwts(options: JwtIntrospectionOptions): Middleware {
  const verifier = createApiTokenVerifier(options);
  return async function introspectApiJwt(ctx, next) {
    await next();
    const oidc = (ctx as unknown as KoaContextWithOIDC).oidc as
      KoaContextWithOIDC['oidc'] | undefined;
    if (oidc?.route !== 'introspection' || !oidc.client) return;
    const body = ctx.body as { error?: string } | undefined;
    if (!mayIntrospect(oidc.client)) {
      if (ctx.status >= 400 && body?.error !== 'unsupported_token_type') return;
      ctx.status = 403;
      ctx.body = {
        error: 'unauthorized_client',
        error_description: 'this client is not registered for token introspection',
      };
      return;
    }
    if (body?.error !== 'unsupported_token_type') return;
    ctx.status = 200;
    ctx.body = { active: false };
    const token = (oidc.params as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string') return;
    try {
      ctx.body = activeResponse(await verifier.verify(token), options.issuer);
    } catch {
      // Expired, denied, foreign or forged: inactive (RFC 7662 §2.2 says no more).
    }
  };
}
