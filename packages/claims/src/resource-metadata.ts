import { DPOP_ALGORITHMS } from './dpop.js';

// RFC 9728: how a resource server names its authorization servers (docs/agents.md).

export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** RFC 9728 §3.1: the well-known path goes between the host and the resource's path. */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_METADATA_PATH}${path}`;
}

/** RFC 9728 §2 members this package publishes. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ['header'];
  dpop_signing_alg_values_supported?: string[];
  dpop_bound_access_tokens_required: boolean;
  resource_documentation?: string;
  resource_name?: string;
}

export interface ResourceDescription {
  /** The resource identifier: the tokens' `aud`. */
  resource: string;
  /** The issuers whose tokens are accepted. */
  authorizationServers: readonly string[];
  scopes: readonly string[];
  /** The DPoP proof algorithms accepted; `false` when DPoP is not accepted. Default DPOP_ALGORITHMS. */
  dpopAlgorithms?: readonly string[] | false | undefined;
  documentation?: string | undefined;
  name?: string | undefined;
}

/** What a service says of itself in its metadata (`createResourceServer({ metadata })`). */
export interface ResourceMetadataOptions {
  /** `scopes_supported`: the service's permissions. Default: those its routes require (the adapters note them). */
  scopes?: readonly string[] | undefined;
  /** `resource_name`. */
  name?: string | undefined;
  /** `resource_documentation`: a URL for people. */
  documentation?: string | undefined;
}

/** The document served at resourceMetadataUrl(resource); built from the verifier's own settings. */
export function protectedResourceMetadata(d: ResourceDescription): ProtectedResourceMetadata {
  const algorithms = d.dpopAlgorithms ?? DPOP_ALGORITHMS;
  return {
    resource: d.resource,
    authorization_servers: [...d.authorizationServers],
    scopes_supported: [...d.scopes],
    bearer_methods_supported: ['header'],
    ...(algorithms === false ? {} : { dpop_signing_alg_values_supported: [...algorithms] }),
    dpop_bound_access_tokens_required: false,
    ...(d.documentation === undefined ? {} : { resource_documentation: d.documentation }),
    ...(d.name === undefined ? {} : { resource_name: d.name }),
  };
}
