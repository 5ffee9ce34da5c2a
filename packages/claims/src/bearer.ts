import type { AccessTokenClaims } from './claims.js';
import type { DpopRequest, DpopVerifier } from './dpop.js';
import { TokenError } from './errors.js';
import type { RoleSource } from './permissions.js';
import { principalFromClaims, type Principal } from './principal.js';
import type { AccessTokenVerifier } from './verify.js';

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The credential of an Authorization header this project accepts. */
export interface AuthorizationCredential {
  /** `DPoP` for a sender-constrained token (RFC 9449 §7.1), whose proof rides beside it. */
  scheme: 'Bearer' | 'DPoP';
  token: string;
}

/** Parses `Bearer <token>` or `DPoP <token>`; throws `authorization_malformed` or `scheme_unsupported`. */
export function resolveAuthorization(
  authorization: string | undefined | null,
): AuthorizationCredential | undefined {
  if (authorization === undefined || authorization === null || authorization === '')
    return undefined;
  return parseAuthorization(authorization);
}

// Remembers the last accepted header: a client repeats its token, and the check scans it whole.
function rememberingLastAuthorization(): typeof resolveAuthorization {
  let last: { authorization: string; credential: AuthorizationCredential } | undefined;
  return (authorization) => {
    if (authorization && last?.authorization === authorization) return last.credential;
    const credential = resolveAuthorization(authorization);
    if (authorization && credential) last = { authorization, credential };
    return credential;
  };
}

function parseAuthorization(authorization: string): AuthorizationCredential {
  const space = authorization.indexOf(' ');
  const name = (space === -1 ? authorization : authorization.slice(0, space)).toLowerCase();
  if (name !== 'bearer' && name !== 'dpop') {
    throw new TokenError('scheme_unsupported', 'only the Bearer and DPoP schemes are accepted');
  }
  const scheme = name === 'bearer' ? 'Bearer' : 'DPoP';
  const token = authorization.slice(space + 1);
  if (space === -1 || !B64TOKEN.test(token)) {
    throw new TokenError('authorization_malformed', `expected "${scheme} <token>"`, { scheme });
  }
  return Object.freeze({ scheme, token });
}

/** The token of `Authorization: Bearer`; undefined when absent or DPoP. */
export function resolveBearer(authorization: string | undefined | null): string | undefined {
  const credential = resolveAuthorization(authorization);
  return credential?.scheme === 'Bearer' ? credential.token : undefined;
}

/** What a resolver may read from a request; apps adapt their context to it. */
export interface CredentialInput {
  authorization?: string | undefined;
  cookies?: { get(name: string): string | undefined } | undefined;
  /** The request's DPoP proofs and target, for `Authorization: DPoP` tokens. */
  dpop?: DpopRequest | undefined;
  /** The credential of a request already admitted, checked again (a stream's heartbeat): not counted again. */
  recheck?: boolean | undefined;
}

/** Undefined when its kind of credential is absent (the next may try); TokenError when invalid. */
export type PrincipalResolver = (input: CredentialInput) => Promise<Principal | undefined>;

/** API keys travel as bearer tokens too; the JWT resolver leaves them to their resolver. */
export const API_KEY_PREFIX = 'sk_live_';

export interface JwtResolverOptions {
  /** Accepts `Authorization: DPoP` tokens with their proofs; without it they are refused. */
  dpop?: DpopVerifier | undefined;
  /** Counts the caller before the DPoP proof is checked, so a proof flood stops at its own limit. */
  limit?: ((claims: AccessTokenClaims) => Promise<void>) | undefined;
  /** The roles' permissions (default: the scope's permissions). A new `version` rebuilds cached principals. */
  roles?: RoleSource | undefined;
}

function asDpopError(error: unknown): unknown {
  return error instanceof TokenError && error.scheme === 'Bearer'
    ? new TokenError(error.code, error.message, { cause: error, scheme: 'DPoP' })
    : error;
}

/** Bearer or DPoP JWTs; a `cnf`-bound token needs its proof on every request (docs/dpop.md). */
export function createJwtPrincipalResolver(
  verifier: AccessTokenVerifier,
  options: JwtResolverOptions = {},
): PrincipalResolver {
  const principals = new WeakMap<object, { version: number | undefined; principal: Principal }>();
  const { dpop, limit, roles } = options;
  const resolveCredential = rememberingLastAuthorization();
  return async function resolveJwtPrincipal(input) {
    const credential = resolveCredential(input.authorization);
    if (credential === undefined) return undefined;
    const { scheme, token } = credential;
    if (scheme === 'Bearer') {
      if (token.startsWith(API_KEY_PREFIX)) return undefined;
    } else if (!dpop) {
      throw new TokenError('scheme_unsupported', 'DPoP is not accepted here');
    }
    const claims =
      scheme === 'Bearer'
        ? await verifier.verify(token)
        : await verifier.verify(token).catch((error: unknown) => {
            throw asDpopError(error);
          });
    if (scheme === 'Bearer' && claims.cnf !== undefined) {
      // A stolen sender-constrained token must not work without its key (RFC 9449 §7.2).
      throw new TokenError('token_bound', 'a sender-constrained token sent as Bearer');
    }
    if (limit && !input.recheck) await limit(claims);
    if (scheme === 'DPoP') {
      const jkt = claims.cnf?.jkt;
      if (jkt === undefined) {
        throw new TokenError('token_not_bound', 'a token without cnf.jkt sent as DPoP', {
          scheme: 'DPoP',
        });
      }
      await dpop!.verify(input.dpop, token, jkt);
    }
    const version = roles?.version;
    const cached = principals.get(claims);
    if (cached && cached.version === version) return cached.principal;
    const built = principalFromClaims(claims, roles);
    Object.freeze(built.roles);
    Object.freeze(built.permissions);
    Object.freeze(built.scope);
    if (built.amr) Object.freeze(built.amr);
    const principal = Object.freeze(built);
    principals.set(claims, { version, principal });
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
