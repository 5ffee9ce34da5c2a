import { randomBytes } from 'node:crypto';
import type { ClientMetadata, ClientsRepo } from '../../data/clients-repo.js';
import { withFapiDefaults } from '../../oauth/fapi.js';
import { TOKEN_EXCHANGE_GRANT } from '../../kernel/grant-types.js';
import { EXCHANGE_NEEDS_AUTHENTICATION, mayExchangeTokens } from '../../oauth/token-exchange.js';
import { isHttpsOrLoopback } from '../../oauth/loopback.js';
import { signsIdTokensWith } from '../../oauth/keys.js';
import { hashClientSecret } from '../../oauth/extensions.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import { AdminError } from './errors.js';
import { redirectProblems, type ClientPatch, type NewClient } from './schemas.js';

export interface RegisteredClient {
  metadata: ClientMetadata;
  /** Shown once; only its hash is stored. */
  clientSecret?: string;
}

/** 32 random bytes: only its SHA-256 is stored (oauth/extensions.ts). */
const newClientSecret = () => randomBytes(32).toString('base64url');

/** Metadata as an API answer: the secret hash is never shown. */
export function publicMetadata(metadata: ClientMetadata): Record<string, unknown> {
  const { client_secret: _hash, ...rest } = metadata;
  return rest;
}

/** Creates a client: id and secret generated, oidc-provider's schema checks, the secret hashed. */
export interface RegisterOptions {
  /** Production: a jwks_uri must be https, even on localhost. */
  httpsJwksUriOnly?: boolean;
}

export async function registerClient(
  host: ProviderHost,
  clients: ClientsRepo,
  input: NewClient,
  options: RegisterOptions = {},
): Promise<RegisteredClient> {
  const httpsOnly = options.httpsJwksUriOnly === true;
  if (input.jwks_uri && !isHttpsOrLoopback(input.jwks_uri, { httpsOnly })) {
    throw new AdminError('invalid_client_metadata', 'jwks_uri must be an https URL');
  }
  // Neither a public client nor one authenticating with its own key has a secret.
  const hasSecret = !['none', 'private_key_jwt'].includes(input.token_endpoint_auth_method);
  const clientSecret = hasSecret ? newClientSecret() : undefined;
  const usesCode = input.grant_types.includes('authorization_code');
  const metadata: ClientMetadata = withFapiDefaults({
    // Hex, never base64url: an id beginning with '-' reads as an option on a command line.
    client_id: input.client_id ?? randomBytes(16).toString('hex'),
    ...(input.client_name ? { client_name: input.client_name } : {}),
    redirect_uris: input.redirect_uris,
    ...(input.post_logout_redirect_uris
      ? { post_logout_redirect_uris: input.post_logout_redirect_uris }
      : {}),
    // A token-exchange policy brings its grant type (RFC 8693).
    grant_types: input.token_exchange
      ? [...new Set([...input.grant_types, TOKEN_EXCHANGE_GRANT])]
      : input.grant_types,
    response_types: usesCode ? ['code'] : [],
    token_endpoint_auth_method: input.token_endpoint_auth_method,
    ...(input.scope ? { scope: input.scope } : {}),
    ...(input.roles ? { roles: input.roles } : {}),
    ...(input.first_party !== undefined ? { first_party: input.first_party } : {}),
    ...(input.require_mfa !== undefined ? { require_mfa: input.require_mfa } : {}),
    ...(input.signup !== undefined ? { signup: input.signup } : {}),
    ...(input.jwks ? { jwks: input.jwks } : {}),
    ...(input.jwks_uri ? { jwks_uri: input.jwks_uri } : {}),
    ...(input.token_endpoint_auth_signing_alg
      ? { token_endpoint_auth_signing_alg: input.token_endpoint_auth_signing_alg }
      : {}),
    ...(input.introspection !== undefined ? { introspection: input.introspection } : {}),
    ...(input.client_assertion_legacy_audience ? { client_assertion_legacy_audience: true } : {}),
    ...(input.dpop_bound_access_tokens !== undefined
      ? { dpop_bound_access_tokens: input.dpop_bound_access_tokens }
      : {}),
    ...(input.application_type ? { application_type: input.application_type } : {}),
    ...(input.require_pushed_authorization_requests !== undefined
      ? { require_pushed_authorization_requests: input.require_pushed_authorization_requests }
      : {}),
    ...(input.fapi ? { fapi: input.fapi } : {}),
    ...(input.token_exchange ? { token_exchange: input.token_exchange } : {}),
    ...(input.authorization_details_types
      ? { authorization_details_types: input.authorization_details_types }
      : {}),
  });
  const stored: ClientMetadata = clientSecret
    ? { ...metadata, client_secret: hashClientSecret(clientSecret) }
    : metadata;
  // oidc-provider's own refusal would only list the algs it has keys for.
  const idTokenAlg = metadata['id_token_signed_response_alg'];
  if (typeof idTokenAlg === 'string' && !signsIdTokensWith(host.keys, idTokenAlg)) {
    throw new AdminError(
      'invalid_client_metadata',
      `id_token_signed_response_alg ${idTokenAlg}: no ${idTokenAlg} signing key is active; ` +
        `rotate one in first (npm run admin -- signing-key:rotate --alg ${idTokenAlg})`,
    );
  }
  await validateWithProvider(host, stored);
  await clients.insert(stored);
  return clientSecret ? { metadata: stored, clientSecret } : { metadata: stored };
}

/** oidc-provider's own schema decides whether the combination is a client it can serve. */
async function validateWithProvider(host: ProviderHost, metadata: ClientMetadata) {
  try {
    await host.current.Client.validate(metadata as never);
  } catch (error) {
    const description = (error as { error_description?: string }).error_description;
    throw new AdminError('invalid_client_metadata', description ?? (error as Error).message);
  }
}

async function storedClient(clients: ClientsRepo, id: string): Promise<ClientMetadata> {
  const current = await clients.findMetadata(id);
  if (!current) throw new AdminError('not_found', 'no such client');
  return current;
}

/** PATCH of a client, held to the rules of creation; other instances see it within the cache. */
export async function updateClient(
  host: ProviderHost,
  clients: ClientsRepo,
  id: string,
  patch: ClientPatch,
): Promise<ClientMetadata> {
  const next: ClientMetadata = { ...(await storedClient(clients, id)) };
  if (patch.client_name !== undefined) next['client_name'] = patch.client_name;
  if (patch.redirect_uris !== undefined) next['redirect_uris'] = patch.redirect_uris;
  for (const key of ['scope', 'roles'] as const) {
    const value = patch[key];
    if (value === undefined) continue;
    if (value.length === 0) delete next[key];
    else next[key] = value;
  }
  if (patch.token_exchange === null) {
    delete next['token_exchange'];
    next['grant_types'] = ((next['grant_types'] as string[] | undefined) ?? []).filter(
      (g) => g !== TOKEN_EXCHANGE_GRANT,
    );
  } else if (patch.token_exchange !== undefined) {
    next['token_exchange'] = patch.token_exchange;
    const current = (next['grant_types'] as string[] | undefined) ?? [];
    next['grant_types'] = [...new Set([...current, TOKEN_EXCHANGE_GRANT])];
  }
  const grantTypes = (next['grant_types'] as string[] | undefined) ?? [];
  const redirectUris = (next['redirect_uris'] as string[] | undefined) ?? [];
  const fields: Record<string, string[]> = {};
  const problem = (field: string, message: string) => (fields[field] ??= []).push(message);
  if (grantTypes.includes('authorization_code') && redirectUris.length === 0)
    problem('redirect_uris', 'required for authorization_code');
  const type = next['application_type'] === 'native' ? 'native' : 'web';
  for (const message of redirectProblems(type, redirectUris)) problem('redirect_uris', message);
  if (
    next['token_exchange'] !== undefined &&
    !mayExchangeTokens(next['token_endpoint_auth_method'])
  )
    problem('token_exchange', EXCHANGE_NEEDS_AUTHENTICATION);
  if (next['roles'] !== undefined && !grantTypes.includes('client_credentials'))
    problem('roles', 'only for client_credentials clients');
  if (Object.keys(fields).length > 0)
    throw new AdminError('validation_failed', 'the request is invalid', fields);
  await validateWithProvider(host, next);
  await clients.put(id, next);
  return next;
}

/** A new secret for a confidential client, shown once; the old one stops working at once. */
export async function rotateClientSecret(
  clients: ClientsRepo,
  id: string,
): Promise<{ metadata: ClientMetadata; clientSecret: string }> {
  const current = await storedClient(clients, id);
  if (typeof current['client_secret'] !== 'string') {
    throw new AdminError(
      'conflict',
      `this client authenticates with ${String(current['token_endpoint_auth_method'])}: it has no secret`,
    );
  }
  const clientSecret = newClientSecret();
  const metadata = { ...current, client_secret: hashClientSecret(clientSecret) };
  await clients.put(id, metadata);
  return { metadata, clientSecret };
}
