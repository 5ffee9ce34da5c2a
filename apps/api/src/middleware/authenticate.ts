import type { Middleware, ParameterizedContext } from 'koa';
import {
  actorChain,
  createAuthenticator,
  type AuthRequest,
  type CredentialInput,
  type DpopNonces,
  type DpopRequest,
  type Principal,
  type ChallengeSettings,
  type PrincipalResolver,
  type RouteRequirement,
} from '@portcullis/claims';
import { dpopRequestOf } from '../auth/dpop.js';
import { withWriteActor } from '../data/write-actor.js';
import { BadRequestError, UnauthorizedError } from '../errors.js';
import type { Permission } from '../permissions.js';

export interface ApiState {
  principal?: Principal;
  /** Set by a stream's heartbeat: its credential is checked again, not counted again. */
  recheck?: boolean;
}

// RFC 6750 §2.3 allows `access_token` in the query; we refuse it (RFC 9700 §2.4.2: it
// leaks into logs, history and Referer). A form-body token cannot arrive: bodies are JSON.
const QUERY_CREDENTIALS = ['access_token', 'api_key', 'apikey', 'sid'];

export interface AuthenticateOptions {
  publicUrl?: string | undefined;
  nonces?: DpopNonces | undefined;
  /** The app's challenge settings (auth/challenge.ts apiChallengeOf). */
  challenge?: ChallengeSettings | undefined;
}

const NO_COOKIES: CredentialInput['cookies'] = { get: () => undefined };

/** A request's credentials as the resolvers read them; the DPoP target only when asked for. */
class RequestCredentials implements AuthRequest {
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
  get recheck(): boolean {
    return (this.ctx.state as ApiState).recheck === true;
  }
  get hasDpopHeader(): boolean {
    return this.ctx.req.headers['dpop'] !== undefined;
  }
}

/** The authenticate middleware, and the same for a route that needs a permission. */
export interface Authenticate extends Middleware<ApiState> {
  /** Its 401 challenges name `permission` as the scope to ask for (RFC 6750 §3). */
  requiring(permission: Permission): Middleware<ApiState>;
}

/** Resolves the credential into `ctx.state.principal` (packages/claims' createAuthenticator). */
export function authenticate(
  resolvers: readonly PrincipalResolver[],
  options: AuthenticateOptions = {},
): Authenticate {
  const authenticator = createAuthenticator({
    resolvers,
    nonces: options.nonces,
    challenge: options.challenge ?? {},
  });
  const { publicUrl } = options;
  const middlewareFor = (requirement?: RouteRequirement): Middleware<ApiState> =>
    async function authenticateRequest(ctx, next) {
      if (
        ctx.querystring !== '' &&
        QUERY_CREDENTIALS.some((name) => Object.hasOwn(ctx.query, name))
      ) {
        throw new BadRequestError(
          'invalid_request',
          'credentials must be sent in the Authorization header',
        );
      }
      const { principal, headers } = await authenticator.authenticate(
        new RequestCredentials(ctx, publicUrl),
        requirement,
      );
      ctx.state.principal = principal;
      for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
      await withWriteActor(actorChain(principal), next);
    };
  return Object.assign(middlewareFor(), {
    requiring: (permission: Permission) => middlewareFor({ permission }),
  });
}

/** The authenticated principal; routes without `authenticate` must not call this. */
export function principalOf(ctx: ParameterizedContext<ApiState>): Principal {
  const principal = ctx.state.principal;
  if (!principal) throw new UnauthorizedError();
  return principal;
}
