import type Provider from 'oidc-provider';
import type { Client } from 'oidc-provider';
// Each import below is of a module oidc-provider does not document (docs/oidc-provider.md).
import * as grants from 'oidc-provider/lib/helpers/grants.js';
// @ts-expect-error: an internal module without type declarations.
import weakCache from 'oidc-provider/lib/helpers/weak_cache.js';

// Every use of oidc-provider's undocumented internals, and nothing else: other modules call these
// functions, never patch the provider themselves. Each is pinned by
// test/oidc-provider-internals.test.ts; what each relies on and why: docs/oidc-provider.md.

type FindClient = (id: string) => Promise<Client | undefined>;
const clientFindWrapped = new WeakSet<Provider>();

/**
 * Client.find replaced once: it is where every client lookup (and so every client authentication)
 * starts, and the documented adapter is not consulted for clients a wrapper answers or refuses.
 */
export function wrapClientFind(
  provider: Provider,
  wrapper: (id: string, find: FindClient) => Promise<Client | undefined>,
): void {
  if (clientFindWrapped.has(provider)) throw new Error('Client.find is wrapped once per provider');
  clientFindWrapped.add(provider);
  const Clients = provider.Client as unknown as { find: FindClient };
  const find = Clients.find.bind(Clients);
  Clients.find = function findClient(id) {
    return wrapper(id, find);
  };
}

/** Client#compareClientSecret replaced: no setting compares a presented secret to a stored hash. */
export function replaceClientSecretComparison(
  provider: Provider,
  compare: (this: { clientSecret?: string }, presented: string) => boolean | Promise<boolean>,
): void {
  Object.defineProperty(provider.Client.prototype, 'compareClientSecret', { value: compare });
}

/**
 * ReplayDetection.unique replaced: its find-then-save lets two concurrent uses of one jti both
 * pass, and the adapter interface (find, upsert) cannot say "insert unless present".
 */
export function replaceReplayDetection(
  provider: Provider,
  unique: (iss: string, jti: string, exp: number) => Promise<boolean>,
): void {
  (provider.ReplayDetection as unknown as { unique: typeof unique }).unique = unique;
}

type FindAccessToken = (value: string, options?: object) => Promise<unknown>;

/** AccessToken.find wrapped: the one place /me (userinfo) resolves its bearer token. */
export function wrapAccessTokenFind(
  provider: Provider,
  wrapper: (value: string, options: object | undefined, find: FindAccessToken) => Promise<unknown>,
): void {
  const AccessToken = provider.AccessToken as unknown as { find: FindAccessToken };
  const find = AccessToken.find.bind(AccessToken);
  AccessToken.find = function findAccessToken(value, options) {
    return wrapper(value, options, find);
  };
}

/**
 * A response mode taken out of the provider's registry: registerResponseMode only adds, and the
 * client default `response_modes` refuses with invalid_request delivered in the mode refused.
 */
export function unregisterResponseMode(provider: Provider, mode: string): boolean {
  const registry = (weakCache as (p: Provider) => { responseModes?: Map<string, unknown> })(
    provider,
  ).responseModes;
  if (!(registry instanceof Map)) throw new Error('oidc-provider has no response-mode registry');
  return registry.delete(mode);
}

/** The response modes the provider answers in (its registry's keys). */
export function registeredResponseModes(provider: Provider): string[] {
  return [
    ...(weakCache as (p: Provider) => { responseModes: Map<string, unknown> })(
      provider,
    ).responseModes.keys(),
  ];
}

/**
 * The token endpoint's helpers for a grant added with the documented registerGrantType: no
 * documented API validates a DPoP proof, checks its replay or builds the token response.
 */
export const grantHelpers = {
  validateDpop: grants.validateDpop,
  checkDpopRequired: grants.checkDpopRequired,
  checkDpopReplay: grants.checkDpopReplay,
  buildTokenResponse: grants.buildTokenResponse,
};

/**
 * The provider's own Set of supported scopes (its `scopes` option, copied at construction): the
 * one that discovery, client metadata and requests are checked against, kept in step with the
 * registered APIs by resource-registry.ts.
 */
export function supportedScopes(provider: Provider): Set<string> {
  const scopes = (weakCache as (p: Provider) => { configuration?: { scopes?: unknown } })(provider)
    .configuration?.scopes;
  if (!(scopes instanceof Set)) throw new Error('oidc-provider keeps its scopes elsewhere');
  return scopes as Set<string>;
}
