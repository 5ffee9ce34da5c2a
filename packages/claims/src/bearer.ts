import { TokenError } from './errors.js';
import { principalFromClaims, type Principal } from './principal.js';
import type { AccessTokenVerifier } from './verify.js';

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The credential of an `Authorization: Bearer <token>` header (scheme case-insensitive,
 * exactly one space, one token). Undefined when there is no header; throws TokenError
 * `authorization_malformed` or, for another scheme, `scheme_unsupported`.
 */
export function resolveBearer(authorization: string | undefined | null): string | undefined {
  if (authorization === undefined || authorization === null || authorization === '')
    return undefined;
  const space = authorization.indexOf(' ');
  const scheme = space === -1 ? authorization : authorization.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') {
    throw new TokenError('scheme_unsupported', 'only the Bearer scheme is accepted');
  }
  const credential = authorization.slice(space + 1);
  if (space === -1 || !B64TOKEN.test(credential)) {
    throw new TokenError('authorization_malformed', 'expected "Bearer <token>"');
  }
  return credential;
}

/** What a resolver may read from a request; apps adapt their context to it. */
export interface CredentialInput {
  authorization?: string | undefined;
  cookies?: { get(name: string): string | undefined } | undefined;
}

/**
 * Turns request credentials into a Principal: undefined when this resolver's kind of
 * credential is absent (so the next may try), TokenError when present but invalid.
 * JWTs, API keys and sessions each plug in as one.
 */
export type PrincipalResolver = (input: CredentialInput) => Promise<Principal | undefined>;

/** API keys travel as bearer tokens too; the JWT resolver leaves them to their resolver. */
export const API_KEY_PREFIX = 'sk_live_';

/**
 * Resolves `Authorization: Bearer <JWT>`. Principals are derived once per cached token
 * (claims objects are stable cache entries) and frozen, because they are shared.
 */
export function createJwtPrincipalResolver(verifier: AccessTokenVerifier): PrincipalResolver {
  const principals = new WeakMap<object, Principal>();
  return async function resolveJwtPrincipal(input) {
    const token = resolveBearer(input.authorization);
    if (token === undefined || token.startsWith(API_KEY_PREFIX)) return undefined;
    const claims = await verifier.verify(token);
    let principal = principals.get(claims);
    if (!principal) {
      const built = principalFromClaims(claims);
      Object.freeze(built.roles);
      Object.freeze(built.permissions);
      Object.freeze(built.scope);
      principal = Object.freeze(built);
      principals.set(claims, principal);
    }
    return principal;
  };
}

/** Tries resolvers in order; the first Principal wins, the first error propagates. */
export function chainResolvers(...resolvers: PrincipalResolver[]): PrincipalResolver {
  return async function resolvePrincipal(input) {
    for (const resolve of resolvers) {
      const principal = await resolve(input);
      if (principal) return principal;
    }
    return undefined;
  };
}
