import { createAttemptLimiter, type AttemptStore } from '@portcullis/accounts';
import { API_SCOPE } from '@portcullis/claims';
import type { Middleware } from 'koa';
import { errors, type Configuration, type KoaContextWithOIDC, type Provider } from 'oidc-provider';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AuditRepo } from '../data/audit-repo.js';
import type { AgentClientSettings } from '../kernel/agent-settings.js';
import { isHttpsOrLoopback } from './loopback.js';

// RFC 7591 / 7592 with a policy (README "Dynamic client registration", docs/agents.md).

/** The metadata member that marks a client registered through the registration endpoint. */
export const DYNAMIC_MARK = 'dynamic_registration';

/** Every registration; `open` adds the limits of an anonymous one. */
const POLICY = 'portcullis-dynamic';
const OPEN_POLICY = 'portcullis-open';

const NO_SECRET_METHODS = ['none', 'private_key_jwt'];
const OPEN_GRANT_TYPES = ['authorization_code', 'refresh_token'];

type Settings = AgentClientSettings['registration'];
type Properties = Record<string, unknown>;

function refuse(message: string): never {
  throw new errors.InvalidClientMetadata(message);
}

function stringsOf(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    refuse(`${name} must be an array of strings`);
  }
  return value as string[];
}

/** `api` (every permission of the user's roles) offers each registered permission too. */
function scopeOffered(
  offered: readonly string[],
  scope: string,
  isPermission: (scope: string) => boolean,
): boolean {
  return offered.includes(scope) || (offered.includes(API_SCOPE) && isPermission(scope));
}

const strings = z.array(z.string());
const uri = z.string();
/** Redirect targets of a client nobody registered by hand: https, or http on a loopback host. */
const redirectTargets = (member: string) =>
  strings.refine((uris) => uris.every((u) => isHttpsOrLoopback(u)), {
    message: `${member} must be https or http on a loopback address`,
  });
const REDIRECT_MEMBERS: ReadonlySet<PropertyKey> = new Set([
  'redirect_uris',
  'post_logout_redirect_uris',
]);

/**
 * The one allow-list of what may come from outside: a registration (RFC 7591/7592) and a
 * client metadata document. RFC 7591 §2 metadata, the OpenID and RFC 9126/9396/9449 members
 * this server offers, `roles` within REGISTRATION_ROLES, and what the server itself set
 * (echoed back on an RFC 7592 update). Anything else is refused (docs/agents.md).
 */
export const selfRegisteredMetadataSchema = z.strictObject({
  client_id: z.string().optional(),
  client_id_issued_at: z.number().optional(),
  client_name: z.string().optional(),
  client_uri: uri.optional(),
  logo_uri: uri.optional(),
  tos_uri: uri.optional(),
  policy_uri: uri.optional(),
  contacts: strings.optional(),
  software_id: z.string().optional(),
  software_version: z.string().optional(),
  redirect_uris: redirectTargets('redirect_uris').optional(),
  post_logout_redirect_uris: redirectTargets('post_logout_redirect_uris').optional(),
  grant_types: strings.optional(),
  response_types: strings.optional(),
  response_modes: strings.optional(),
  scope: z.string().optional(),
  token_endpoint_auth_method: z.string().optional(),
  token_endpoint_auth_signing_alg: z.string().optional(),
  jwks: z.unknown().optional(),
  jwks_uri: uri.optional(),
  application_type: z.enum(['web', 'native']).optional(),
  id_token_signed_response_alg: z.string().optional(),
  subject_type: z.string().optional(),
  require_auth_time: z.boolean().optional(),
  default_max_age: z.number().optional(),
  dpop_bound_access_tokens: z.boolean().optional(),
  require_pushed_authorization_requests: z.boolean().optional(),
  authorization_details_types: strings.optional(),
  roles: strings.optional(),
  [DYNAMIC_MARK]: z.literal(true).optional(),
});

/** Throws oidc-provider's RFC 7591 §3.2.2 error for the first member outside the allow-list. */
export function assertSelfRegisteredMetadata(metadata: unknown): void {
  const parsed = selfRegisteredMetadataSchema.safeParse(metadata);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    refuse(`${issue.keys.join(', ')}: not client metadata a registration may set`);
  }
  const member = String(issue.path[0]);
  if (REDIRECT_MEMBERS.has(member)) {
    throw Object.assign(new errors.InvalidRedirectUri(), { error_description: issue.message });
  }
  refuse(`${member}: ${issue.message}`);
}

/** What any dynamically registered client may be: the operator's scopes, grant types and roles. */
function dynamicPolicy(settings: Settings, isPermission: (scope: string) => boolean) {
  return function applyDynamicPolicy(ctx: KoaContextWithOIDC, p: Properties): void {
    // What the client sent (p adds client_id and secrets of the server's own).
    assertSelfRegisteredMetadata(ctx.oidc.body);
    if (p['scope'] === undefined) p['scope'] = settings.scopes.join(' ');
    if (typeof p['scope'] !== 'string') refuse('scope must be a string');
    const scope = p['scope'].split(' ').filter(Boolean);
    const scopeRefused = scope.find((s) => !scopeOffered(settings.scopes, s, isPermission));
    if (scopeRefused) refuse(`scope ${scopeRefused} is not offered to registered clients`);

    p['grant_types'] ??= ['authorization_code'];
    const grantRefused = stringsOf(p['grant_types'], 'grant_types').find(
      (g) => !settings.grantTypes.includes(g),
    );
    if (grantRefused) refuse(`grant type ${grantRefused} is not offered to registered clients`);

    const roles = p['roles'] === undefined ? [] : stringsOf(p['roles'], 'roles');
    const roleRefused = roles.find((r) => !settings.roles.includes(r));
    if (roleRefused) refuse(`role ${roleRefused} is not offered to registered clients`);

    // No stored secrets: the clients table keeps hashes the registration endpoint cannot write.
    p['token_endpoint_auth_method'] ??= 'none';
    if (!NO_SECRET_METHODS.includes(String(p['token_endpoint_auth_method']))) {
      refuse('token_endpoint_auth_method must be none or private_key_jwt');
    }
    delete p['client_secret'];
    delete p['client_secret_expires_at'];
    p[DYNAMIC_MARK] = true;
  };
}

/** Anonymous registration: public clients with PKCE only (PKCE is required for every client). */
function applyOpenPolicy(_ctx: KoaContextWithOIDC, p: Properties): void {
  if (p['token_endpoint_auth_method'] !== 'none') {
    refuse('an anonymous registration is a public client: token_endpoint_auth_method none');
  }
  const grantRefused = stringsOf(p['grant_types'], 'grant_types').find(
    (g) => !OPEN_GRANT_TYPES.includes(g),
  );
  if (grantRefused) refuse(`grant type ${grantRefused} needs an initial access token`);
  if (p['roles'] !== undefined && stringsOf(p['roles'], 'roles').length > 0) {
    refuse('roles need an initial access token');
  }
}

/** oidc-provider's registration features as REGISTRATION says (off: neither is enabled). */
export function registrationFeatures(
  settings: Settings,
  isPermission: (scope: string) => boolean,
): Pick<NonNullable<Configuration['features']>, 'registration' | 'registrationManagement'> {
  const enabled = settings.mode !== 'off';
  return {
    registration: {
      enabled,
      // Every registration carries an initial access token: the admin's, or open's own (below).
      initialAccessToken: true,
      issueRegistrationAccessToken: true,
      policies: {
        [POLICY]: dynamicPolicy(settings, isPermission),
        [OPEN_POLICY]: applyOpenPolicy,
      },
    },
    registrationManagement: { enabled, rotateRegistrationAccessToken: true },
  };
}

/** An initial access token for one registration (admin API, CLI); only its value is shown. */
export async function issueRegistrationToken(
  provider: Provider,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  const expiresAt = new Date((Math.floor(Date.now() / 1000) + ttlSeconds) * 1000);
  const token = new provider.InitialAccessToken({ expiresIn: ttlSeconds, policies: [POLICY] });
  return { token: await token.save(), expiresAt };
}

/** 429 in oidc-provider's error shape. */
function tooMany(retryAfter: number) {
  return {
    error: 'invalid_request',
    error_description: `too many registrations from this address; retry after ${retryAfter} seconds`,
  };
}

/**
 * REGISTRATION=open: an anonymous POST to the registration endpoint, counted per IP, runs with
 * an initial access token of its own carrying the open policy, destroyed after the request.
 */
export function openRegistration(
  options: {
    /** The provider host (provider-host.ts): its Provider of the moment. */
    host: { readonly current: Provider };
    path: string;
    settings: Settings;
  },
  store: AttemptStore,
): Middleware | undefined {
  const { host, path, settings } = options;
  if (settings.mode !== 'open') return undefined;
  const limiter = createAttemptLimiter(
    { ip: { points: settings.ipLimit, durationSec: settings.windowSec, onSuccess: 'reward' } },
    store,
  );
  return async function anonymousRegistration(ctx, next) {
    if (ctx.method !== 'POST' || ctx.path !== path || ctx.get('Authorization') !== '') {
      return next();
    }
    const attempt = await limiter.begin({ ip: ctx.ip });
    if (attempt.retryAfter > 0) {
      ctx.status = 429;
      ctx.set('Retry-After', String(attempt.retryAfter));
      ctx.set('Cache-Control', 'no-store');
      ctx.body = tooMany(attempt.retryAfter);
      return;
    }
    const provider = host.current;
    const token = new provider.InitialAccessToken({
      expiresIn: 60,
      policies: [POLICY, OPEN_POLICY],
    });
    const value = await token.save();
    ctx.req.headers.authorization = `Bearer ${value}`;
    try {
      await next();
    } finally {
      await token.destroy();
    }
  };
}

/** Each registration, update and deletion in the audit log (GET /admin/audit). */
export function auditRegistrations(
  provider: Provider,
  deps: { audit: AuditRepo; logger: Logger; track(work: Promise<unknown>): void },
): void {
  const record = (kind: 'client_registered' | 'client_updated' | 'client_deleted') =>
    function onRegistration(ctx: KoaContextWithOIDC, client: { clientId: string }) {
      const anonymous = ctx.oidc.entities.InitialAccessToken?.policies?.includes(OPEN_POLICY);
      deps.track(
        deps.audit
          .record({
            kind,
            clientId: client.clientId,
            detail: {
              via: 'registration_endpoint',
              ...(kind === 'client_registered' ? { anonymous: anonymous === true } : {}),
              ip: ctx.ip,
              user_agent: ctx.get('user-agent') || undefined,
            },
          })
          .catch((e: unknown) => deps.logger.error({ err: e }, 'registration audit failed')),
      );
    };
  provider.on('registration_create.success', record('client_registered'));
  provider.on('registration_update.success', record('client_updated'));
  provider.on('registration_delete.success', record('client_deleted'));
}
