import { errors, type Client, type FapiProfile, type KoaContextWithOIDC } from 'oidc-provider';
import { LEGACY_AUDIENCE } from './client-assertion.js';
import { isHttpsOrLoopback } from './loopback.js';

/** The one profile a client may opt into: `"fapi": "2.0"` in its metadata. */
export const FAPI_2: FapiProfile = '2.0';

/** Signing algorithms FAPI 2.0 allows (PS256, ES256; EdDSA is not offered here). */
export const FAPI_ALGS: readonly string[] = ['ES256', 'PS256'];

/** The alg a FAPI 2.0 client gets when it names none (our signing keys are RS256 or ES256). */
export const FAPI_DEFAULT_ALG = 'ES256';

const FAPI_GRANTS = new Set(['authorization_code', 'refresh_token', 'client_credentials']);

/** Defaults `"fapi": "2.0"` implies (PAR, DPoP, ES256); explicit values meet fapiProblems. */
export function withFapiDefaults<M extends Record<string, unknown>>(metadata: M): M {
  if (metadata['fapi'] !== FAPI_2) return metadata;
  return {
    require_pushed_authorization_requests: true,
    dpop_bound_access_tokens: true,
    token_endpoint_auth_signing_alg: FAPI_DEFAULT_ALG,
    id_token_signed_response_alg: FAPI_DEFAULT_ALG,
    ...metadata,
  };
}

/** FAPI 2.0 as client metadata, checked when a client is stored or loaded (README "FAPI 2.0"). */
export function fapiProblems(metadata: Record<string, unknown>): string[] {
  const profile = metadata['fapi'];
  if (profile === undefined) return [];
  if (profile !== FAPI_2) return ['fapi must be "2.0"'];
  const problems: string[] = [];
  const must = (ok: boolean, message: string) => ok || problems.push(`FAPI 2.0: ${message}`);
  must(
    metadata['token_endpoint_auth_method'] === 'private_key_jwt',
    'token_endpoint_auth_method must be private_key_jwt (no client secrets)',
  );
  must(
    FAPI_ALGS.includes(String(metadata['token_endpoint_auth_signing_alg'])),
    'token_endpoint_auth_signing_alg must be ES256 or PS256',
  );
  must(
    metadata[LEGACY_AUDIENCE] !== true,
    `${LEGACY_AUDIENCE} is not allowed: assertions must name the issuer as their audience`,
  );
  must(
    metadata['require_pushed_authorization_requests'] === true,
    'require_pushed_authorization_requests must be true',
  );
  must(metadata['dpop_bound_access_tokens'] === true, 'dpop_bound_access_tokens must be true');
  must(
    FAPI_ALGS.includes(String(metadata['id_token_signed_response_alg'])),
    'id_token_signed_response_alg must be ES256 or PS256',
  );
  const redirects = Array.isArray(metadata['redirect_uris']) ? metadata['redirect_uris'] : [];
  // An authorization response travels encrypted: https, or http to this very machine.
  for (const uri of redirects.filter((u) => !isHttpsOrLoopback(u))) {
    must(false, `redirect URI ${String(uri)} must be https (http only to a loopback host)`);
  }
  const grants = Array.isArray(metadata['grant_types'])
    ? (metadata['grant_types'] as string[])
    : [];
  for (const grant of grants.filter((g) => !FAPI_GRANTS.has(g))) {
    must(false, `${grant} is not part of the profile`);
  }
  return problems;
}

/** extraClientMetadata validator for `fapi`: the first problem, as oidc-provider's error. */
export function validateFapiMetadata(metadata: Record<string, unknown>): void {
  const [problem] = fapiProblems(metadata);
  if (problem) throw new errors.InvalidClientMetadata(problem);
}

/** Whether a client was registered with `"fapi": "2.0"`. */
export function isFapiClient(client: Client | undefined): boolean {
  // oidc-provider also asks where no client is known yet (discovery).
  return (client as { fapi?: unknown } | undefined)?.fapi === FAPI_2;
}

/** features.fapi.profile: oidc-provider applies its FAPI 2.0 checks to these clients. */
export function fapiProfile(_ctx: KoaContextWithOIDC, client: Client): FapiProfile | undefined {
  return isFapiClient(client) ? FAPI_2 : undefined;
}
