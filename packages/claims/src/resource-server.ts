import {
  chainResolvers,
  createJwtPrincipalResolver,
  resolveAuthorization,
  type CredentialInput,
  type PrincipalResolver,
} from './bearer.js';
import {
  authenticationErrorOf,
  forbidden,
  permissionRefusal,
  stepUpError,
  unauthenticated,
  type ChallengeSettings,
} from './challenge.js';
import type { DenyList } from './deny-list.js';
import { createDpopNonces } from './dpop-nonce.js';
import { createMemoryReplayStore } from './dpop-replay.js';
import {
  createDpopVerifier,
  type DpopAlgorithm,
  type DpopNonces,
  type DpopReplayStore,
  type DpopRequest,
} from './dpop.js';
import { createRemoteKeySet, type KeySource } from './jwks.js';
import { hasPermission, type RoleSource } from './permissions.js';
import type { Principal } from './principal.js';
import {
  protectedResourceMetadata,
  resourceMetadataUrl,
  type ProtectedResourceMetadata,
  type ResourceDescription,
  type ResourceMetadataOptions,
} from './resource-metadata.js';
import { stepUpShortfall, type StepUpRequirement } from './step-up.js';
import { createTokenCache } from './token-cache.js';
import { createAccessTokenVerifier, type VerifyOptions } from './verify.js';

/** A request as the core reads it; the framework adapters build it. */
export interface AuthRequest extends CredentialInput {
  /** True when the request carries a `DPoP` header (its responses then get `DPoP-Nonce`). */
  hasDpopHeader?: boolean;
}

/** Who called, and the headers every response to the request must carry. */
export interface Authentication {
  principal: Principal;
  /** The scheme of the Authorization header; undefined for a cookie session. */
  scheme: 'Bearer' | 'DPoP' | undefined;
  /** `DPoP-Nonce` for a DPoP request when nonces are on (RFC 9449 §8.2). */
  headers: Record<string, string>;
}

/** What one route requires besides a valid credential. */
export interface RouteRequirement {
  /** Permission (`invoices:read`; `invoices:*` grants every action); lacking: 403 `forbidden`. */
  permission?: string | undefined;
  /** Scope values the token must carry, all of them; lacking: 403 with `insufficient_scope`. */
  scopes?: readonly string[] | undefined;
  /** RFC 9470: the weakest `acr` and the largest sign-in age; lacking: 401 step-up challenge. */
  stepUp?: StepUpRequirement | undefined;
}

/** The framework-neutral core every adapter goes through; refusals throw AuthenticationError. */
export interface Authenticator {
  readonly challenge: ChallengeSettings;
  /** With the route's requirement, its 401 challenges name the scope it needs (RFC 6750 §3). */
  authenticate(request: AuthRequest, requirement?: RouteRequirement): Promise<Authentication>;
  /** Throws AuthenticationError unless `auth` meets `requirement`. */
  authorize(auth: Authentication, requirement: RouteRequirement): void;
  /** Notes a route's requirement as an adapter mounts it: the metadata's default scopes. */
  declareRoute?(requirement: RouteRequirement): void;
  /** The RFC 9728 document of a resource server created with `metadata`. */
  metadata?(): ProtectedResourceMetadata;
}

export interface AuthenticatorOptions {
  /** Tried in order; the first Principal wins, the first error is the answer. */
  resolvers: readonly PrincipalResolver[];
  challenge?: ChallengeSettings | undefined;
  /** With server nonces: the nonce DPoP responses hand out. */
  nonces?: DpopNonces | undefined;
  /** Milliseconds clock for step-up ages. Default Date.now. */
  now?: (() => number) | undefined;
}

/** A requirement's OAuth scope, space-separated: its scopes and its permission, also a scope value. */
export function requirementScope(requirement: RouteRequirement = {}): string | undefined {
  const { permission, scopes = [] } = requirement;
  const all = [...new Set([...scopes, ...(permission ? [permission] : [])])];
  return all.length > 0 ? all.join(' ') : undefined;
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const resolve = chainResolvers(...options.resolvers);
  const challenge = options.challenge ?? {};
  const { nonces } = options;
  const now = options.now ?? Date.now;

  const refusal = (error: unknown, scope: string | undefined) =>
    authenticationErrorOf(challenge, error, scope) ?? error;

  return {
    challenge,
    async authenticate(request, requirement) {
      const scope = requirementScope(requirement);
      let principal: Principal | undefined;
      let scheme: Authentication['scheme'];
      try {
        principal = await resolve(request);
        // Parsed (and cached) by the resolver already when it holds a credential.
        scheme = resolveAuthorization(request.authorization)?.scheme;
      } catch (error) {
        throw refusal(error, scope);
      }
      if (!principal) throw unauthenticated(challenge, request.authorization !== undefined, scope);
      // The nonce rotates: every DPoP response hands out the current one (RFC 9449 §8.2).
      const headers: Record<string, string> =
        nonces && request.hasDpopHeader ? { 'DPoP-Nonce': await nonces.current() } : {};
      return { principal, scheme, headers };
    },
    authorize(auth, requirement) {
      const { principal, scheme } = auth;
      if (requirement.permission && !hasPermission(principal.permissions, requirement.permission)) {
        throw permissionRefusal(principal, requirement.permission, { settings: challenge, scheme });
      }
      const missing = requirement.scopes?.filter((scope) => !principal.scope.includes(scope));
      if (missing && missing.length > 0) {
        throw forbidden('scope_missing', { settings: challenge, scope: missing.join(' '), scheme });
      }
      if (requirement.stepUp) {
        const shortfall = stepUpShortfall(principal, requirement.stepUp, now());
        if (shortfall) throw stepUpError(challenge, shortfall, requirement.stepUp, scheme);
      }
    },
  };
}

/** Options of a resource server trusting one issuer's access tokens. */
export interface ResourceServerOptions extends Omit<VerifyOptions, 'keys' | 'cache' | 'denyList'> {
  /** The issuer's JWKS. Default `<issuer>/.well-known/jwks.json` (Portcullis's path). */
  jwksUri?: string | undefined;
  /** Keys from elsewhere (a local JWKS, a shared HS256 secret) instead of `jwksUri`. */
  keys?: KeySource | undefined;
  /** Revoked tokens: any `isDenied(claims)`. Default none: a token is good until it expires. */
  denyList?: Pick<DenyList, 'isDenied'> | undefined;
  /** DPoP (RFC 9449): on by default with an in-memory replay store; `false` refuses it. */
  dpop?: false | DpopOptions | undefined;
  realm?: string | undefined;
  /** RFC 9728 metadata URL, sent as `resource_metadata` in every challenge. Default: `metadata`'s. */
  resourceMetadata?: string | undefined;
  /** This service's RFC 9728 document, served by the adapters at resourceMetadataUrl(audience). */
  metadata?: ResourceMetadataOptions | undefined;
  /** Credential resolvers tried before access tokens (API keys, sessions, …). */
  resolvers?: readonly PrincipalResolver[] | undefined;
  /** A role table (README "Roles"). Default none: the permissions are the token's scope values. */
  roles?: RoleSource | undefined;
}

export interface DpopOptions {
  /** Where proof `jti`s are remembered. Default in memory (one instance only). */
  replay?: DpopReplayStore | undefined;
  /** A secret every instance shares: turns on server nonces (`use_dpop_nonce`). */
  nonceSecret?: string | Uint8Array | undefined;
  /** A subset of DPOP_ALGORITHMS. */
  algorithms?: readonly DpopAlgorithm[] | undefined;
  /** How far a proof's `iat` may be from now, seconds. Default 60. */
  iatWindowSec?: number | undefined;
}

/** One issuer's access tokens, DPoP, optional deny list and RFC 6750/9449/9470 answers in one call. */
export function createResourceServer(options: ResourceServerOptions): Authenticator {
  const {
    jwksUri,
    keys,
    denyList,
    dpop,
    realm,
    resourceMetadata,
    metadata,
    resolvers,
    roles,
    ...verify
  } = options;
  const now = options.now ?? Date.now;
  const clock = options.now ? { now: options.now } : {};
  const keySource =
    keys ??
    createRemoteKeySet(
      jwksUri ?? `${options.issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
      clock,
    );
  const verifier = createAccessTokenVerifier({
    ...verify,
    keys: keySource,
    cache: createTokenCache(),
    ...(denyList ? { denyList } : {}),
  });
  const secret = dpop ? dpop.nonceSecret : undefined;
  const nonces =
    secret === undefined
      ? undefined
      : createDpopNonces({
          secret: () =>
            Promise.resolve(typeof secret === 'string' ? new TextEncoder().encode(secret) : secret),
          ...clock,
        });
  const dpopVerifier =
    dpop === false
      ? undefined
      : createDpopVerifier({
          replay: dpop?.replay ?? createMemoryReplayStore(clock),
          nonces,
          ...(dpop?.algorithms ? { algorithms: dpop.algorithms } : {}),
          ...(dpop?.iatWindowSec === undefined ? {} : { iatWindowSec: dpop.iatWindowSec }),
          ...(options.clockToleranceSec === undefined
            ? {}
            : { clockToleranceSec: options.clockToleranceSec }),
          ...clock,
        });
  const dpopAlgorithms = dpopVerifier ? dpopVerifier.algorithms : false;
  const authenticator = createAuthenticator({
    resolvers: [
      ...(resolvers ?? []),
      createJwtPrincipalResolver(verifier, { dpop: dpopVerifier, roles }),
    ],
    challenge: {
      realm,
      dpopAlgorithms,
      resourceMetadata:
        resourceMetadata ?? (metadata ? resourceMetadataUrl(options.audience) : undefined),
    },
    nonces,
    now,
  });
  if (!metadata) return authenticator;
  return withMetadata(authenticator, {
    resource: options.audience,
    authorizationServers: [options.issuer],
    scopes: metadata.scopes,
    dpopAlgorithms,
    documentation: metadata.documentation,
    name: metadata.name,
  });
}

/** Adds the RFC 9728 document; without the author's scopes, those its routes require. */
function withMetadata(
  authenticator: Authenticator,
  description: Omit<ResourceDescription, 'scopes'> & { scopes: readonly string[] | undefined },
): Authenticator {
  const required = new Set<string>();
  return {
    ...authenticator,
    declareRoute({ permission, scopes = [] }) {
      for (const scope of [...scopes, ...(permission ? [permission] : [])]) required.add(scope);
    },
    metadata: () =>
      protectedResourceMetadata({
        ...description,
        scopes: description.scopes ?? [...required].sort(),
      }),
  };
}

/** Headers as Node's IncomingMessage holds them. */
type NodeHeaders = Record<string, string | string[] | undefined>;

/** The core's request from a Node request; `url` is absolute, as the client addressed it. */
export function authRequestOf(
  request: { method?: string | undefined; headers: NodeHeaders; headersDistinct?: NodeHeaders },
  url: string,
): AuthRequest {
  const authorization = request.headers['authorization'];
  const distinct = request.headersDistinct?.['dpop'] ?? request.headers['dpop'];
  const proofs = distinct === undefined ? [] : Array.isArray(distinct) ? distinct : [distinct];
  const dpop: DpopRequest = { proofs, method: request.method ?? 'GET', url, request };
  return {
    authorization:
      typeof authorization === 'string' && authorization !== '' ? authorization : undefined,
    dpop,
    hasDpopHeader: proofs.length > 0,
  };
}
