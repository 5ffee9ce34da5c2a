import type { Middleware, ParameterizedContext } from 'koa';
import {
  chainResolvers,
  type CredentialInput,
  type DpopNonces,
  type DpopRequest,
  type Principal,
  type PrincipalResolver,
} from '@portcullis/claims';
import { dpopRequestOf } from '../auth/dpop.js';
import { BadRequestError, UnauthorizedError } from '../errors.js';

export interface ApiState {
  principal?: Principal;
}

// RFC 6750 §2.3 allows `access_token` in the query; we refuse it (RFC 9700 §2.4.2: it
// leaks into logs, history and Referer). A form-body token cannot arrive: bodies are JSON.
const QUERY_CREDENTIALS = ['access_token', 'api_key', 'apikey', 'sid'];

export interface AuthenticateOptions {
  /** PUBLIC_URL: the base of the URL DPoP proofs must name (auth/dpop.ts). */
  publicUrl?: string | undefined;
  /** With DPOP_NONCE: the nonces DPoP responses hand out. */
  nonces?: DpopNonces | undefined;
}

const NO_COOKIES: CredentialInput['cookies'] = { get: () => undefined };

/** A request's credentials as the resolvers read them; the DPoP target only when asked for. */
class RequestCredentials implements CredentialInput {
  readonly authorization: string | undefined;
  #dpop: DpopRequest | undefined;
  constructor(
    private readonly ctx: ParameterizedContext,
    private readonly publicUrl: string | undefined,
  ) {
    this.authorization = ctx.get('Authorization') || undefined;
  }
  get cookies(): CredentialInput['cookies'] {
    return this.ctx.req.headers.cookie === undefined ? NO_COOKIES : this.ctx.cookies;
  }
  get dpop(): DpopRequest {
    return (this.#dpop ??= dpopRequestOf(this.ctx, this.publicUrl));
  }
}

/**
 * Resolves the request's credential into `ctx.state.principal` through packages/claims.
 * `resolvers` run in order (API keys, then sessions, then JWTs as they are added); the
 * first Principal wins. A presented but refused credential is a TokenError, which the
 * error renderer turns into 401 `invalid_token` with its fixed description.
 */
export function authenticate(
  resolvers: readonly PrincipalResolver[],
  options: AuthenticateOptions = {},
): Middleware<ApiState> {
  const resolve = chainResolvers(...resolvers);
  const { publicUrl, nonces } = options;
  return async function authenticateRequest(ctx, next) {
    if (
      ctx.querystring !== '' &&
      QUERY_CREDENTIALS.some((name) => Object.hasOwn(ctx.query, name))
    ) {
      throw new BadRequestError(
        'invalid_request',
        'credentials must be sent in the Authorization header',
      );
    }
    const input = new RequestCredentials(ctx, publicUrl);
    const { authorization } = input;
    const principal = await resolve(input);
    if (!principal) {
      throw new UnauthorizedError(
        authorization === undefined ? 'unauthenticated' : 'invalid_token',
      );
    }
    ctx.state.principal = principal;
    // The nonce rotates: every DPoP response hands out the current one (RFC 9449 §8.2).
    if (nonces && ctx.req.headers['dpop'] !== undefined) {
      ctx.set('DPoP-Nonce', await nonces.current());
    }
    await next();
  };
}

/** The authenticated principal; routes without `authenticate` must not call this. */
export function principalOf(ctx: ParameterizedContext<ApiState>): Principal {
  const principal = ctx.state.principal;
  if (!principal) throw new UnauthorizedError();
  return principal;
}
