import { errors, type KoaContextWithOIDC, type Provider } from 'oidc-provider';
import { audienceRule, CLIENT_ASSERTION_ALGS } from './client-assertion.js';

interface RefusalError {
  error?: string;
  error_description?: string;
  error_detail?: string;
  cause?: unknown;
}

/** oidc-provider's own descriptions, which say nothing of the reason. */
const GENERIC = new Set<unknown>([
  new errors.InvalidClientAuth().error_description,
  new errors.InvalidGrant().error_description,
]);

const REPLAY =
  'client assertion replay: this jti was already used; sign a new assertion for each request';
const SUBJECT = 'client assertion iss and sub must both be the client_id';

/** oidc-provider's error_detail of a refused client assertion -> what the client is told. */
const ASSERTION_DETAILS: Record<string, string | ((ctx: KoaContextWithOIDC) => string)> = {
  'client assertion tokens must only be used once': REPLAY,
  'expiration must be specified in the client_assertion JWT':
    'client assertion lifetime: exp is required',
  'jwt expired': 'client assertion lifetime: expired (exp is in the past)',
  'jwt not active yet': 'client assertion lifetime: not valid yet (nbf is in the future)',
  'jwt issued in the future': 'client assertion lifetime: iat is in the future',
  'unique jti (JWT ID) must be provided in the client_assertion JWT':
    'client assertion jti is required, a new one for each assertion',
  'iss (JWT issuer) must be provided in the client_assertion JWT': SUBJECT,
  'iss (JWT issuer) must be the client_id': SUBJECT,
  'aud (JWT audience) must be provided in the client_assertion JWT': audienceRule,
  'list of audience (aud) must include the endpoint url, issuer identifier or token endpoint url':
    audienceRule,
  'audience (aud) must equal the endpoint url, issuer identifier or token endpoint url':
    audienceRule,
  'alg mismatch': (ctx) => {
    const pinned = (ctx.oidc.client as { clientAuthSigningAlg?: string } | undefined)
      ?.clientAuthSigningAlg;
    return `client assertion signature key: alg must be ${pinned ?? CLIENT_ASSERTION_ALGS.join(', ')}`;
  },
};

/** jose's error codes (the cause oidc-provider keeps) of a signature that did not verify. */
const ASSERTION_KEY_CAUSES: Record<string, string> = {
  ERR_JWKS_NO_MATCHING_KEY:
    'client assertion signature key: no key registered for this client matches its kid and alg',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED:
    'client assertion signature key: the signature does not verify with the key registered for this kid',
};

/** oidc-provider's error_detail of a refused grant -> a text naming only what the client sees. */
const GRANT_DETAILS: Record<string, string> = {
  'authorization code not found': 'authorization code unknown',
  'authorization code is expired': 'authorization code expired',
  'authorization code already consumed':
    'authorization code already used; the tokens issued for it are revoked',
  'authorization code redirect_uri mismatch':
    'redirect_uri is not the one of the authorization request',
  'code_verifier does not match code_challenge':
    'code_verifier does not match the code_challenge of the authorization request',
  'code_verifier must be provided': 'code_verifier is required (PKCE)',
  'client mismatch': 'the code or token was issued to another client',
  'grant not found': 'the grant was revoked',
  'grant is expired': 'the grant has expired',
  'refresh token not found': 'refresh token unknown or revoked',
  'refresh token is expired': 'refresh token expired',
  'refresh token already used':
    'refresh token already used; the grant is revoked (refresh-token reuse)',
  'device code already consumed': 'device code already used',
  'missing DPoP proof JWT': 'DPoP proof required: the grant is DPoP-bound',
  'DPoP proof key thumbprint does not match dpop_jkt':
    'DPoP proof key is not the one named by dpop_jkt',
  'failed jkt verification': 'DPoP proof key is not the one the refresh token is bound to',
  'authorization code invalid (referenced account not found)': 'the user no longer exists',
  'refresh token invalid (referenced account not found)': 'the user no longer exists',
};

function assertionDescription(ctx: KoaContextWithOIDC, err: RefusalError): string | undefined {
  const rule = ASSERTION_DETAILS[err.error_detail ?? ''];
  if (typeof rule === 'function') return rule(ctx);
  if (rule) return rule;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? ASSERTION_KEY_CAUSES[code] : undefined;
}

function descriptionOf(ctx: KoaContextWithOIDC, err: RefusalError): string | undefined {
  if (err.error === 'invalid_client' && ctx.oidc.params?.['client_assertion'] !== undefined) {
    return assertionDescription(ctx, err);
  }
  if (err.error === 'invalid_grant' && ctx.oidc.route === 'token') {
    return GRANT_DETAILS[err.error_detail ?? ''];
  }
  return undefined;
}

/** RFC 6749 §5.2: refusals say why (docs/architecture.md "Provider extensions"). */
export function describeRefusals(provider: Provider): void {
  function describe(ctx: KoaContextWithOIDC, err: Error): void {
    const refusal = err as RefusalError;
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    if (!body || typeof body !== 'object' || body.error !== refusal.error) return;
    // A description set where the error was thrown (ClientAssertionRefused) stays.
    if (!GENERIC.has(body.error_description)) return;
    const description = descriptionOf(ctx, refusal);
    if (description) body.error_description = description;
  }
  // The routes whose client authenticates (client-auth-limits.ts).
  provider.on('grant.error', describe);
  provider.on('introspection.error', describe);
  provider.on('revocation.error', describe);
  provider.on('pushed_authorization_request.error', describe);
  provider.on('device_authorization.error', describe);
}
