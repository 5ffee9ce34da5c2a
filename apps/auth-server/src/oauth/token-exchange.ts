import {
  CLIENT_SUBJECT_PREFIX,
  MAX_ACTOR_DEPTH,
  type AccessTokenClaims,
  type AccessTokenVerifier,
  type Actor,
} from '@portcullis/claims';
import { errors, type Client, type TokenEndpointGrantContext } from 'oidc-provider';
import type Provider from 'oidc-provider';
import { z } from 'zod';
import type { AccountsRepo } from '@portcullis/accounts';
import { API_SCOPE } from '@portcullis/claims';
import { grantHelpers } from './internals.js';
import type { ResourceRegistry } from './resource-registry.js';
import { createApiTokenVerifier, type JwtIntrospectionOptions } from './introspection.js';
import type { NewAuditEvent } from '../data/audit-repo.js';
import { TOKEN_EXCHANGE_GRANT } from '../kernel/grant-types.js';

// RFC 8693 token exchange (README "Token exchange (RFC 8693)", docs/token-exchange.md).

export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** Client metadata `token_exchange`: the audiences it may exchange for; no act when impersonating. */
export interface TokenExchangePolicy {
  audiences: string[];
  impersonation?: boolean;
}

export const tokenExchangePolicySchema = z
  .object({
    audiences: z.array(z.url()).min(1).max(20),
    impersonation: z.boolean().optional(),
  })
  .strict();

/**
 * Token exchange is for clients that authenticate (docs/token-exchange.md): the registration
 * schemas refuse a policy on a public client, the grant refuses one stored before that rule.
 */
export function mayExchangeTokens(tokenEndpointAuthMethod: unknown): boolean {
  return tokenEndpointAuthMethod !== 'none';
}

export const EXCHANGE_NEEDS_AUTHENTICATION =
  'token exchange is for clients that authenticate at the token endpoint, not public ones (token_endpoint_auth_method none)';

export function policyOf(client: unknown): TokenExchangePolicy | undefined {
  const value = (client as { token_exchange?: unknown } | undefined)?.token_exchange;
  const parsed = tokenExchangePolicySchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** What an exchanged token carries beyond the usual claims (claims.ts reads it). */
export interface ExchangedClaims {
  act?: Actor;
  acr?: string;
  amr?: string[];
  auth_time?: number;
}

const exchanged = new WeakMap<object, ExchangedClaims>();

/** The act and sign-in claims of an exchanged access token; undefined for any other token. */
export function exchangedClaimsOf(token: object): ExchangedClaims | undefined {
  return exchanged.get(token);
}

/** RFC 8693 §4.1: at most this many actors deep (what packages/claims accepts). */
const MAX_ACTORS = MAX_ACTOR_DEPTH;

function depth(act: Actor | undefined): number {
  return act ? 1 + depth(act.act) : 0;
}

const invalidGrant = (description: string) =>
  new errors.CustomOIDCProviderError('invalid_grant', description);
const invalidRequest = (description: string) => new errors.InvalidRequest(description);

interface ExchangeParams {
  subject_token?: unknown;
  subject_token_type?: unknown;
  actor_token?: unknown;
  requested_token_type?: unknown;
  resource?: unknown;
  audience?: unknown;
  scope?: unknown;
  impersonate?: unknown;
}

/** The one target: `resource` or `audience`, a single value (RFC 8693 §2.1). */
function targetOf(params: ExchangeParams): string {
  const { resource, audience } = params;
  if (resource !== undefined && audience !== undefined && resource !== audience) {
    throw new errors.InvalidTarget('resource and audience name different targets');
  }
  const target = resource ?? audience;
  if (target === undefined) throw new errors.InvalidTarget('resource (or audience) is required');
  if (typeof target !== 'string') throw new errors.InvalidTarget('only one target is supported');
  return target;
}

/**
 * `api` covers each permission (docs/token-exchange.md): passing one on is no widening, as the
 * target's scopes are already narrowed to what the subject's roles grant there.
 */
function covers(held: ReadonlySet<string>, scope: string): boolean {
  return held.has(scope) || (held.has(API_SCOPE) && scope !== API_SCOPE);
}

/** Requested scopes, each held, of the target and allowed; default: all such of the target's. */
function scopeOf(
  params: ExchangeParams,
  subject: AccessTokenClaims,
  target: readonly string[],
  client: Client,
): string[] {
  const held = new Set(subject.scope.split(' ').filter(Boolean));
  const registered = (client as { scope?: string }).scope;
  const allowed = registered ? new Set(registered.split(' ')) : undefined;
  const grantable = (s: string) =>
    covers(held, s) && target.includes(s) && (allowed ? covers(allowed, s) : true);
  if (typeof params.scope !== 'string') {
    const all = target.filter(grantable);
    // `api` says every permission of the roles there; the token spells it out (claims.ts).
    return all.includes(API_SCOPE) ? [API_SCOPE] : all;
  }
  const requested = [...new Set(params.scope.split(' ').filter(Boolean))];
  const wider = requested.find((s) => !grantable(s));
  if (wider !== undefined) {
    throw new errors.InvalidScope(
      `scope ${wider} is not held by the subject token, not a scope of the target, or not allowed to this client`,
      wider,
    );
  }
  return requested;
}

export interface TokenExchangeDeps {
  apiTokens: JwtIntrospectionOptions;
  /** The registered APIs: the targets, and the audiences of subject tokens. */
  registry: ResourceRegistry;
  accounts: Pick<AccountsRepo, 'findById'>;
  accessTokenTtl: number;
  /** The signing key for this client's tokens to this API (claims.ts). */
  signingKey(client: Client | undefined, alg: string | null): { alg: string; kid: string };
  /** Audits each exchange (`token_exchanged`); failures are the caller's to log. */
  audit(entry: NewAuditEvent): void;
}

/** The grant at /token: a user's access token for one resource -> a token for another. */
export function registerTokenExchange(provider: Provider, deps: TokenExchangeDeps): void {
  // One verifier per registered API a subject token has come for.
  const verifiers = new Map<string, AccessTokenVerifier>();
  function verifierOf(aud: string): AccessTokenVerifier | undefined {
    if (!deps.registry.find(aud)) return undefined;
    let verifier = verifiers.get(aud);
    if (!verifier) {
      verifier = createApiTokenVerifier({ ...deps.apiTokens, apiAudience: aud });
      verifiers.set(aud, verifier);
    }
    return verifier;
  }

  async function verifySubject(token: string): Promise<AccessTokenClaims> {
    const unverified = audiencesOf(token);
    for (const aud of unverified) {
      const verifier = verifierOf(aud);
      if (!verifier) continue;
      try {
        return await verifier.verify(token);
      } catch {
        break;
      }
    }
    throw invalidGrant(
      'subject_token is not a valid, unexpired, unrevoked access token of this server',
    );
  }

  async function tokenExchange(ctx: TokenEndpointGrantContext) {
    const params = ctx.oidc.params as ExchangeParams;
    const { client } = ctx.oidc;
    // RFC 6749 §5.2 invalid_client: "no client authentication included".
    if (!mayExchangeTokens(client.tokenEndpointAuthMethod)) {
      throw Object.assign(new errors.InvalidClientAuth(), {
        error_description: EXCHANGE_NEEDS_AUTHENTICATION,
      });
    }
    const policy = policyOf(client);
    if (!policy) {
      throw new errors.UnauthorizedClient('this client is not registered for token exchange');
    }
    if (typeof params.subject_token !== 'string' || params.subject_token === '') {
      throw invalidRequest('subject_token is required');
    }
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
      throw invalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    }
    if (params.actor_token !== undefined) {
      throw invalidRequest('actor_token is not supported: the authenticated client is the actor');
    }
    if (
      params.requested_token_type !== undefined &&
      params.requested_token_type !== ACCESS_TOKEN_TYPE
    ) {
      throw invalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
    }
    if (params.impersonate !== undefined && params.impersonate !== 'true') {
      throw invalidRequest('impersonate must be true when present');
    }
    const impersonate = params.impersonate === 'true';
    if (impersonate && policy.impersonation !== true) {
      throw new errors.UnauthorizedClient(
        'this client may not impersonate (its token carries act)',
      );
    }
    const target = targetOf(params);
    const resource = deps.registry.find(target);
    if (!resource) throw new errors.InvalidTarget('the target is not a registered resource');
    if (!policy.audiences.includes(target)) {
      throw new errors.InvalidTarget('this client may not exchange tokens for this audience');
    }

    const subject = await verifySubject(params.subject_token);
    if (subject.sub.startsWith(CLIENT_SUBJECT_PREFIX)) {
      throw invalidGrant('subject_token must be a user access token');
    }
    const act = subject.act;
    if (!impersonate && depth(act) >= MAX_ACTORS) {
      throw invalidGrant(`the delegation chain is at most ${MAX_ACTORS} actors long`);
    }

    // A sender-constrained subject token is exchanged only by the holder of its key.
    const dPoP = await grantHelpers.validateDpop(provider, ctx);
    const jkt = subject.cnf?.jkt;
    if (jkt !== undefined && dPoP?.thumbprint !== jkt) {
      throw invalidGrant('subject_token is DPoP-bound: send a DPoP proof of the same key');
    }
    grantHelpers.checkDpopRequired(provider, ctx, dPoP);
    if (resource.dpopRequired && !dPoP) {
      throw invalidRequest('this API takes only DPoP-bound tokens: send a DPoP proof (RFC 9449)');
    }

    // What the subject's roles grant on the target now: an exchange never widens them.
    const roles = (await deps.accounts.findById(subject.sub))?.roles ?? [];
    const targetScopes = deps.registry.grantable(resource, roles);
    const scope = scopeOf(params, subject, targetScopes, client);
    const secondsNow = () => Math.floor(Date.now() / 1000);
    if (subject.exp <= secondsNow()) throw invalidGrant('subject_token is expired');

    const token = new provider.AccessToken({
      accountId: subject.sub,
      client,
      gty: 'token_exchange',
      scope: scope.join(' ') || undefined,
      ...(subject.grant_id ? { grantId: subject.grant_id } : {}),
    } as never);
    const resourceServer = {
      scope: targetScopes.join(' '),
      audience: target,
      accessTokenFormat: 'jwt',
      accessTokenTTL: resource.accessTokenTtl ?? deps.accessTokenTtl,
      jwt: { sign: deps.signingKey(client, resource.signingAlg) },
    };
    (token as unknown as { resourceServer: unknown }).resourceServer = resourceServer;
    const newAct: Actor | undefined = impersonate
      ? act
      : { sub: client.clientId, ...(act ? { act } : {}) };
    exchanged.set(token, {
      ...(newAct ? { act: newAct } : {}),
      ...(subject.acr !== undefined ? { acr: subject.acr } : {}),
      ...(subject.amr !== undefined ? { amr: subject.amr } : {}),
      ...(subject.auth_time !== undefined ? { auth_time: subject.auth_time } : {}),
    });
    if (dPoP) {
      await grantHelpers.checkDpopReplay(provider, ctx, dPoP, client.clientId);
      token.setThumbprint('jkt', dPoP.thumbprint);
    }

    // Never longer than the subject token, fixed after the awaits above: `exp` is absolute.
    const now = secondsNow();
    const ttl = Math.min(resource.accessTokenTtl ?? deps.accessTokenTtl, subject.exp - now);
    if (ttl <= 0) throw invalidGrant('subject_token is expired');
    token.exp = now + ttl;
    resourceServer.accessTokenTTL = ttl;
    ctx.oidc.entity('AccessToken', token);
    const value = await token.save();
    deps.audit({
      kind: 'token_exchanged',
      clientId: client.clientId,
      subject: subject.sub,
      grantId: subject.grant_id,
      detail: {
        audience: target,
        scope: token.scope ?? '',
        actors: chainOf(newAct),
        ...(impersonate ? { impersonation: true } : {}),
        ...(jkt ? { dpop: true } : {}),
      },
    });
    ctx.body = grantHelpers.buildTokenResponse(provider, {
      accessToken: value,
      expiresIn: token.expiration,
      issuedTokenType: ACCESS_TOKEN_TYPE,
      scope: token.scope || undefined,
      tokenType: token.tokenType,
    });
  }

  provider.registerGrantType(TOKEN_EXCHANGE_GRANT, tokenExchange, [
    'subject_token',
    'subject_token_type',
    'actor_token',
    'actor_token_type',
    'requested_token_type',
    'resource',
    'audience',
    'scope',
    'impersonate',
  ]);
}

/** The chain as a list, the latest actor first. */
function chainOf(act: Actor | undefined): string[] {
  return act ? [act.sub, ...chainOf(act.act)] : [];
}

/** The unverified `aud` values, only to pick the verifier (which checks everything). */
function audiencesOf(token: string): string[] {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
      aud?: unknown;
    };
    const aud = payload.aud;
    if (typeof aud === 'string') return [aud];
    if (Array.isArray(aud)) return aud.filter((a): a is string => typeof a === 'string');
  } catch {
    // Not a JWT: no verifier applies.
  }
  return [];
}
