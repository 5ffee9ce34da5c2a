import { hkdfSync } from 'node:crypto';
import type { AccountsRepo } from '@portcullis/accounts';
import { ACR } from '@portcullis/claims';
import type { SharedDenyList } from '@portcullis/db';
import { PAYMENT_DETAIL_TYPE } from '@portcullis/shop';
import type { ClientMetadata, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { AuthConfig } from '../kernel/config.js';
import { PROVIDER_ROUTES } from './provider-routes.js';
import type { ClientsRepo } from '../data/clients-repo.js';
import type { OidcPayloadsRepo } from '../data/oidc-payloads-repo.js';
import { LANGUAGES } from '../kernel/ui-settings.js';
import type { ProviderPages, UserCodeRefusal } from './pages.js';
import { createFindAccount } from './account.js';
import { memoizedAccount } from '../data/request-memo.js';
import { createCustomizeJwt, createExtraTokenClaims, resourceServerInfo } from './claims.js';
import type { ResourceRegistry } from './resource-registry.js';
import { OIDC_SCOPES } from '../kernel/scopes.js';
import type { DeviceGuard } from './device-guard.js';
import {
  CLIENT_ASSERTION_ALGS,
  CLIENT_AUTH_METHODS,
  clientAssertionCheck,
  LEGACY_AUDIENCE,
} from './client-assertion.js';
import { mayIntrospect } from './introspection.js';
import { RESPONSE_MODES } from './response-modes.js';
import { fapiProfile, validateFapiMetadata } from './fapi.js';
import { userCodeForm } from './device-complete-uri.js';
import { checkRequestedScope } from './requested-scope.js';
import type { KeyRing } from './keys.js';
import { createLogoutGuard } from './subject-logout.js';
import { DYNAMIC_MARK, registrationFeatures } from './registration.js';
import { clientIdMetadataFeature, providerFetch } from './client-id-metadata.js';
import { tokenExchangePolicySchema } from './token-exchange.js';
import { richAuthorizationRequestsFeature } from './authorization-details.js';
import { DAY, ID_TOKEN_TTL, PAR_REQUEST_URI_TTL, REFRESH_TOKEN_TTL } from './lifetimes.js';

export interface ProviderSetup {
  config: AuthConfig;
  oidcPayloads: OidcPayloadsRepo;
  accounts: AccountsRepo;
  clients: ClientsRepo;
  keys: KeyRing;
  cookieKeys: string[];
  deviceGuard: DeviceGuard;
  /** Logout everywhere: artifacts of a denied subject issued before the logout are gone. */
  denyList: Pick<SharedDenyList, 'isDenied' | 'sync'>;
  /** oidc-provider's prompts with the second-factor check, a new policy per Provider built. */
  interactionPolicy: () => NonNullable<NonNullable<Configuration['interactions']>['policy']>;
  /** Clients that are not in the clients table (the account page's), fresh for each Provider. */
  staticClients: () => ClientMetadata[];
  /** The pages of its flows, rendered by identity. */
  pages: ProviderPages;
  /** The registered APIs (resource servers) and their permissions. */
  registry: ResourceRegistry;
}

export const SESSION_COOKIE = '_session';
export const INTERACTION_RESUME_COOKIE = '_interaction_resume';

/** Extra client metadata (admin/api/schemas.ts says what each member means). */
function validateClientMetadata(
  _ctx: KoaContextWithOIDC | undefined,
  key: string,
  value: unknown,
  metadata: object,
) {
  if (key === 'fapi') validateFapiMetadata(metadata as Record<string, unknown>);
  if (key === 'roles' && value !== undefined) {
    if (!Array.isArray(value) || !value.every((r) => typeof r === 'string')) {
      throw new TypeError('roles must be an array of strings');
    }
  }
  if (key === 'first_party' && value !== undefined && typeof value !== 'boolean') {
    throw new TypeError('first_party must be a boolean');
  }
  if (key === DYNAMIC_MARK && value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`${DYNAMIC_MARK} must be a boolean`);
  }
  if (key === 'introspection' && value !== undefined && typeof value !== 'boolean') {
    throw new TypeError('introspection must be a boolean');
  }
  if (key === LEGACY_AUDIENCE && value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`${LEGACY_AUDIENCE} must be a boolean`);
  }
  // README "Multi-factor sign-in": every sign-in for this client needs a second factor.
  if (key === 'require_mfa' && value !== undefined && typeof value !== 'boolean') {
    throw new TypeError('require_mfa must be a boolean');
  }
  // README "Sign-up": false hides sign-up at this client's sign-in even when SIGNUP=open.
  if (key === 'signup' && value !== undefined && typeof value !== 'boolean') {
    throw new TypeError('signup must be a boolean');
  }
  // README "Token exchange (RFC 8693)": the audiences this client may exchange tokens for.
  if (key === 'token_exchange' && value !== undefined) {
    if (!tokenExchangePolicySchema.safeParse(value).success) {
      throw new TypeError(
        'token_exchange must be { audiences: [URL, …], impersonation?: boolean }',
      );
    }
  }
}

/** DPoP nonces are HMACs under this secret; every instance must derive the same one. */
function dpopNonceSecret(cookieKeys: string[]): Buffer {
  return Buffer.from(hkdfSync('sha256', cookieKeys[0] ?? '', '', 'portcullis dpop nonce', 32));
}

/** DPoP (RFC 9449) at /token for every grant; server nonces only when DPOP_NONCE is true. */
function dpopFeature(config: AuthConfig, cookieKeys: string[]) {
  return {
    enabled: true,
    ...(config.dpopNonce ? { nonceSecret: dpopNonceSecret(cookieKeys) } : {}),
    requireNonce: () => config.dpopNonce,
  };
}

function apiTokenTtl(fallback: number) {
  return (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
    token.resourceServer?.accessTokenTTL ?? fallback;
}

/** oidc-provider settings (docs/security.md "Decisions and their RFCs"). */
export function providerConfiguration(s: ProviderSetup): Configuration {
  // findAccount and extraTokenClaims both read the user: once per request.
  const accounts: AccountsRepo = {
    ...s.accounts,
    findById: (id) => memoizedAccount(id, () => s.accounts.findById(id)),
  };
  const { config } = s;
  const apiResource = config.apiAudience;
  const isLocalhostDev = config.env !== 'production';

  return {
    adapter: s.oidcPayloads.adapterFactory(createLogoutGuard(s.denyList), {
      refreshReuseInterval: config.refreshReuseInterval,
      // Longer than a rotation that goes well, shorter than a client waits for its 503.
      rotationBound: config.dbQueryTimeoutMs / 2000,
    }),
    clients: s.staticClients(),
    jwks: { keys: s.keys.jwks as never },
    findAccount: createFindAccount(accounts),
    cookies: {
      names: {
        session: SESSION_COOKIE,
        interaction: '_interaction',
        resume: INTERACTION_RESUME_COOKIE,
      },
      keys: s.cookieKeys,
      long: { httpOnly: true, sameSite: 'lax', signed: true, secure: !isLocalhostDev },
      short: { httpOnly: true, sameSite: 'lax', signed: true, secure: !isLocalhostDev },
    },
    claims: {
      // The sign-in in every ID token (README "Multi-factor sign-in"); /me has none of it.
      openid: ['sub', 'acr', 'amr', 'auth_time'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    // Every scope a client may request or register; the provider's copy follows the registered
    // APIs (resource-registry.ts).
    scopes: [...s.registry.scopes],
    // Unknown scopes refused, offline_access kept (README "Authorization Code + PKCE").
    extraParams: {
      scope: (ctx, value, client) => checkRequestedScope(ctx, value, client as never, s.registry),
    },
    responseTypes: ['code'],
    // oidc-provider 9 implements S256 only: `plain` is refused as an unsupported method.
    pkce: { required: () => true },
    clientAuthMethods: [...CLIENT_AUTH_METHODS],
    // RFC 7523bis: aud is the issuer alone, exp is near (README "private_key_jwt").
    assertJwtClientAuthClaimsAndHeader: clientAssertionCheck(config.clientAssertionMaxLifetime),
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: config.signingAlg,
      token_endpoint_auth_method: 'client_secret_basic',
      response_modes: RESPONSE_MODES,
      // Every client may ask for a payment; the user approves each one (admin: [] to refuse).
      authorization_details_types: [PAYMENT_DETAIL_TYPE],
    },
    // acr_values asking for ACR.mfa requires a second factor (identity/mfa/sign-in.ts).
    acrValues: [ACR.password, ACR.mfa],
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      userinfoSigningAlgValues: ['RS256', 'ES256'],
      requestObjectSigningAlgValues: ['RS256', 'ES256'],
      // private_key_jwt only: no HS* (no client_secret_jwt), no none.
      clientAuthSigningAlgValues: [...CLIENT_ASSERTION_ALGS],
    },
    extraClientMetadata: {
      properties: [
        'roles',
        'first_party',
        'introspection',
        'fapi',
        'require_mfa',
        'signup',
        'token_exchange',
        LEGACY_AUDIENCE,
        DYNAMIC_MARK,
      ],
      validator: validateClientMetadata,
    },
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: () => true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    extraTokenClaims: createExtraTokenClaims(accounts, s.registry) as never,
    formats: {
      customizers: { jwt: createCustomizeJwt({ registry: s.registry, accounts }) as never },
    },
    ttl: {
      // A registered API's own lifetime, else ACCESS_TOKEN_TTL.
      AccessToken: apiTokenTtl(config.accessTokenTtl),
      ClientCredentials: apiTokenTtl(config.accessTokenTtl),
      AuthorizationCode: 60,
      DeviceCode: 10 * 60,
      IdToken: ID_TOKEN_TTL,
      RefreshToken: REFRESH_TOKEN_TTL,
      Grant: REFRESH_TOKEN_TTL,
      Session: 14 * DAY,
      Interaction: 60 * 60,
      // A pushed request is used at once by the browser redirect that follows it.
      PushedAuthorizationRequest: PAR_REQUEST_URI_TTL,
    },
    discovery: {
      claim_types_supported: ['normal'],
      // The pages' languages (README "Branding and languages"), chosen by ui_locales first.
      ui_locales_supported: [...LANGUAGES],
      // RFC 8414 §2: without them a client must assume client_secret_basic.
      introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS.filter(
        (m) => m !== 'none',
      ),
      introspection_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
      // A public client revokes its own tokens with its client_id alone (RFC 7009 §2.1).
      revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
      revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    },
    interactions: {
      policy: s.interactionPolicy(),
      url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
    },
    routes: PROVIDER_ROUTES,
    fetch: providerFetch(config.env === 'production'),
    features: {
      devInteractions: { enabled: false },
      // Per client, `"fapi": "2.0"` (README "FAPI 2.0"); no client is FAPI by default.
      fapi: { enabled: true, profile: fapiProfile },
      // RFC 9126: per client or for all with REQUIRE_PAR; a request_uri works once, for 60 s.
      pushedAuthorizationRequests: {
        enabled: true,
        requirePushedAuthorizationRequests: config.requirePar,
        allowUnregisteredRedirectUris: false,
      },
      dPoP: dpopFeature(config, s.cookieKeys),
      clientCredentials: { enabled: true },
      revocation: {
        enabled: true,
        // A client may revoke only its own tokens (RFC 7009 §2.1); others are ignored silently.
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      introspection: {
        enabled: true,
        // Only resource servers registered with `introspection: true` (403 for others).
        allowedPolicy: async (_ctx, client) => mayIntrospect(client),
      },
      userinfo: { enabled: true },
      // RFC 7591/7592 as REGISTRATION says (oauth/registration.ts); off by default.
      ...registrationFeatures(config.agentClients.registration, (scope) =>
        s.registry.isPermission(scope),
      ),
      // An https client_id names its own metadata document (oauth/client-id-metadata.ts).
      clientIdMetadataDocument: clientIdMetadataFeature(config.agentClients.clientIdMetadata),
      // README "Features of oidc-provider": our pages and headers, registered targets only.
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          s.pages.logoutConfirm(ctx, form);
        },
        async postLogoutSuccessSource(ctx) {
          s.pages.loggedOut(ctx);
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => apiResource,
        // An API scope requested (else granted): a JWT for the API; otherwise opaque, for /me.
        useGrantedResource: async (ctx, model) => {
          const requested = (ctx.oidc.params as { scope?: string } | undefined)?.scope;
          const scope = requested ?? (model as { scope?: string }).scope ?? '';
          return String(scope)
            .split(' ')
            .some((v) => s.registry.scopes.has(v) && !OIDC_SCOPES.includes(v));
        },
        getResourceServerInfo: resourceServerInfo({
          registry: s.registry,
          accounts,
          accessTokenTtl: config.accessTokenTtl,
          keys: s.keys,
        }),
      },
      // RFC 9396: payment details approved on the consent page, in the API's tokens.
      // The feature's type depends on introspection's; both are on.
      richAuthorizationRequests: richAuthorizationRequestsFeature(apiResource) as never,
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        async userCodeInputSource(ctx, _form, _out, err) {
          const error = err as { name?: string; userCode?: string } | undefined;
          let message: UserCodeRefusal | undefined;
          if (error?.name === 'NotFoundError') {
            await s.deviceGuard.recordWrongUserCode(ctx);
            message = 'notFound';
          } else if (error?.name === 'ExpiredError') message = 'expired';
          else if (error?.name === 'AlreadyUsedError') message = 'alreadyUsed';
          else if (error?.name === 'AbortedError') message = 'aborted';
          else if (error?.name === 'NoCodeError') message = 'noCode';
          else if (error) message = 'other';
          s.pages.userCodeInput(ctx, userCodeForm(ctx), message);
        },
        async userCodeConfirmSource(ctx, form, client, _deviceInfo, userCode) {
          s.pages.userCodeConfirm(ctx, form, client.clientName ?? client.clientId, userCode);
        },
        async successSource(ctx) {
          s.pages.deviceConnected(ctx);
        },
      },
    },
    async renderError(ctx, out) {
      s.pages.error(ctx, out);
    },
  };
}
