import { randomBytes } from 'node:crypto';
import type { ClientMetadata, ClientsRepo } from '../data/clients-repo.js';
import { withFapiDefaults } from '../provider/fapi.js';
import { isHttpsOrLoopback } from '../provider/loopback.js';
import { signsIdTokensWith } from '../provider/keys.js';
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
  const clientSecret = hasSecret ? randomBytes(32).toString('base64url') : undefined;
  const usesCode = input.grant_types.includes('authorization_code');
  const metadata: ClientMetadata = withFapiDefaults({
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
    ...(input.require_mfa !== undefined ? { require_mfa: input.require_mfa } : {}),
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
        `rotate one in first (pnpm admin signing-key:rotate --alg ${idTokenAlg})`,
    );
  }
  try {
    await host.current.Client.validate(stored as never);
  } catch (error) {
    const description = (error as { error_description?: string }).error_description;
    throw new AdminError('invalid_client_metadata', description ?? (error as Error).message);
  }
  await clients.insert(stored);
  return clientSecret ? { metadata: stored, clientSecret } : { metadata: stored };
}
