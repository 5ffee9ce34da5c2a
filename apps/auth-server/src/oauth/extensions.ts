import { hash } from 'node:crypto';
import { constantTimeEqual } from '@portcullis/observability';
import type Provider from 'oidc-provider';
import type { Client } from 'oidc-provider';
import type { OidcPayloadsRepo } from '../data/oidc-payloads-repo.js';
import type { ClientsRepo } from '../data/clients-repo.js';
import type { ClientAuthLimiter } from './client-auth-limits.js';
import { prefilledUserCodePage } from './device-complete-uri.js';
import type { ProviderPages } from './pages.js';
import { watchGrantEvents, type GrantEventDeps } from './grant-events.js';
import { replaceClientSecretComparison, wrapClientFind } from './internals.js';
import { introspectApiJwts, type JwtIntrospectionOptions } from './introspection.js';
import { describeRefusals } from './refusal-descriptions.js';
import { auditRegistrations } from './registration.js';
import { claimJtiOnce } from './replay-detection.js';
import { memoizeInRequest } from '../data/request-memo.js';
import { advertiseResponseModes, removeFormPost } from './response-modes.js';
import { reportGrantedScope } from './token-scope.js';
import { acceptApiTokensAtUserinfo } from './userinfo.js';
import { registerTokenExchange, type TokenExchangeDeps } from './token-exchange.js';

/** SHA-256 hex: what the clients table stores instead of a client secret. */
export function hashClientSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Secrets are stored as SHA-256, compared in constant time (docs/security.md "Client secrets"). */
function compareHashedClientSecret(this: { clientSecret?: string }, presented: string): boolean {
  const stored = Buffer.from(this.clientSecret ?? '', 'hex');
  return constantTimeEqual(stored, hash('sha256', String(presented), 'buffer'));
}

type FindClient = (id: string) => Promise<Client | undefined>;

/** One Client instance per cached metadata object, not oidc-provider's JSON hash per request. */
function reuseClientInstances(clients: ClientsRepo) {
  const instances = new WeakMap<object, Client>();
  return async function findClient(id: string, find: FindClient): Promise<Client | undefined> {
    const metadata =
      typeof id === 'string' && id !== '' ? await clients.findMetadata(id) : undefined;
    const known = metadata && instances.get(metadata);
    if (known) return known;
    // A client metadata document: fetched once per request even when it fails (the
    // authorization error handler looks the client up again), docs/agents.md.
    const client =
      !metadata && typeof id === 'string' && id.startsWith('https://')
        ? await memoizeInRequest(`client-document:${id}`, () => find(id), { keepFailure: true })
        : await find(id);
    if (metadata && client) instances.set(metadata, client);
    return client;
  };
}

export interface ProviderExtensionDeps {
  clients: ClientsRepo;
  oidcPayloads: Pick<OidcPayloadsRepo, 'claimJtiOnce'>;
  /** Verifies the API's JWT access tokens (introspection, /me). */
  apiTokens: JwtIntrospectionOptions;
  events: GrantEventDeps;
  /** Failed client authentications (CLIENT_AUTH_*); none: unlimited. */
  clientAuthLimiter?: ClientAuthLimiter | undefined;
  /** The pages of oidc-provider's flows, rendered by identity. */
  pages: ProviderPages;
  /** Registered resources and the signing key of exchanged tokens (RFC 8693). */
  tokenExchange: Omit<TokenExchangeDeps, 'apiTokens' | 'audit'>;
}

/**
 * Everything Portcullis changes in a built oidc-provider, in the order it is applied; documented
 * settings stay in configuration.ts. Order: docs/architecture.md "Provider extensions".
 */
export function extendProvider(provider: Provider, deps: ProviderExtensionDeps): void {
  // Methods replaced, each through internals.ts (docs/oidc-provider.md):
  // 1-2. Client.find, wrapped once: failed client authentications limited first (429, with a
  //      middleware that settles them), then one Client instance per cached metadata object.
  const findClient = reuseClientInstances(deps.clients);
  const limiter = deps.clientAuthLimiter;
  wrapClientFind(
    provider,
    limiter ? (id, find) => limiter.beforeLookup(id, () => findClient(id, find)) : findClient,
  );
  if (limiter) provider.use(limiter.settle);
  // 3. Client#compareClientSecret: the clients table holds SHA-256 hashes, not secrets.
  replaceClientSecretComparison(provider, compareHashedClientSecret);
  // 4. ReplayDetection.unique: a jti claimed by one INSERT, so concurrent replays lose.
  claimJtiOnce(provider, deps.oidcPayloads);
  // 5. AccessToken.find at /me: the API's JWT access tokens are accepted there.
  acceptApiTokensAtUserinfo(provider, deps.apiTokens);
  // 6. The response-mode registry: form_post needs an inline script our CSP forbids.
  removeFormPost(provider);
  // 6a. A grant added: RFC 8693 token exchange for registered resources.
  registerTokenExchange(provider, {
    ...deps.tokenExchange,
    apiTokens: deps.apiTokens,
    audit: (entry) =>
      deps.events.track(
        deps.events.audit
          .record(entry)
          .catch((e: unknown) => deps.events.logger.error({ err: e }, 'audit write failed')),
      ),
  });

  // Answers rewritten after next() (outermost first):
  // 7. Discovery lists only the response modes left (its setting cannot remove any).
  provider.use(advertiseResponseModes);
  // 8. /device?user_code=…: our page with a Continue button, not an auto-submitting form.
  provider.use(prefilledUserCodePage(deps.pages));
  // 9. The token response's scope names the OIDC scopes of the grant too (RFC 6749 §5.1).
  provider.use(reportGrantedScope);
  // 10. Introspection: 403 for clients not registered for it; the API's JWTs reported.
  provider.use(introspectApiJwts(deps.apiTokens));

  // Event listeners (documented hooks), in registration order:
  // 11. Grants: audit rows, alerts on reuse, revocations, metrics; 503 for outages.
  watchGrantEvents(provider, deps.events);
  // 12. A refused grant or client assertion gets a description saying why (RFC 6749 §5.2).
  describeRefusals(provider);
  // 13. Dynamic registrations, updates and deletions: audit rows.
  auditRegistrations(provider, deps.events);
}
