import { randomBytes } from 'node:crypto';
import type { ClientMetadata, ClientsRepo } from '../data/clients-repo.js';
import { hashClientSecret, type ProviderHost } from '../provider/provider-host.js';
import { AdminError } from './errors.js';
import type { NewClient } from './schemas.js';

export interface RegisteredClient {
  metadata: ClientMetadata;
  /** Shown once; only its hash is stored. */
  clientSecret?: string;
}

/** Metadata as an API answer: the secret hash is never shown. */
export function publicMetadata(metadata: ClientMetadata): Record<string, unknown> {
  const { client_secret: _hash, ...rest } = metadata;
  return rest;
}

/**
 * Creates a client from validated RFC 7591 metadata: generates the id and (for
 * confidential clients) a 32-byte secret, lets oidc-provider's own schema check the
 * combination, then stores the metadata with the secret's SHA-256 in its place.
 */
export async function registerClient(
  host: ProviderHost,
  clients: ClientsRepo,
  input: NewClient,
): Promise<RegisteredClient> {
  const isPublic = input.token_endpoint_auth_method === 'none';
  const clientSecret = isPublic ? undefined : randomBytes(32).toString('base64url');
  const usesCode = input.grant_types.includes('authorization_code');
  const metadata: ClientMetadata = {
    client_id: input.client_id ?? randomBytes(16).toString('base64url'),
    ...(input.client_name ? { client_name: input.client_name } : {}),
    redirect_uris: input.redirect_uris,
    ...(input.post_logout_redirect_uris
      ? { post_logout_redirect_uris: input.post_logout_redirect_uris }
      : {}),
    grant_types: input.grant_types,
    response_types: usesCode ? ['code'] : [],
    token_endpoint_auth_method: input.token_endpoint_auth_method,
    ...(input.scope ? { scope: input.scope } : {}),
    ...(input.roles ? { roles: input.roles } : {}),
    ...(input.first_party !== undefined ? { first_party: input.first_party } : {}),
    ...(input.dpop_bound_access_tokens !== undefined
      ? { dpop_bound_access_tokens: input.dpop_bound_access_tokens }
      : {}),
  };
  const stored: ClientMetadata = clientSecret
    ? { ...metadata, client_secret: hashClientSecret(clientSecret) }
    : metadata;
  try {
    await host.current.Client.validate(stored as never);
  } catch (error) {
    const description = (error as { error_description?: string }).error_description;
    throw new AdminError(400, 'invalid_client_metadata', description ?? (error as Error).message);
  }
  await clients.insert(stored);
  return clientSecret ? { metadata: stored, clientSecret } : { metadata: stored };
}
