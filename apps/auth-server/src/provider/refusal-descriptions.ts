import { errors, type KoaContextWithOIDC, type Provider } from 'oidc-provider';
import { audienceRule, CLIENT_ASSERTION_ALGS } from './client-assertion.js';

interface RefusalError {
  error?: string;
  error_description?: string;
  error_detail?: string;
  cause?: unknown;
}

/** oidc-provider's own descriptions, which say nothing of the reason. */
const GENERIC = new Set<unknown>([new errors.InvalidClientAuth().error_description]);

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
  return undefined;
}

/**
 * oidc-provider answers a refused client assertion with "client authentication failed",
 * the reason only in its log (error_detail), where RFC 6749 §5.2's error_description is
 * for the developer. Its error handler sets the JSON body, then emits `<route>.error` with
 * the error at once, so the listener puts a fixed text for the detail there (no library
 * message reaches the client). An unknown client or a wrong secret stays "client
 * authentication failed".
 */
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
