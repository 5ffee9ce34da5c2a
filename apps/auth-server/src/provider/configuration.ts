import { hkdfSync } from 'node:crypto';
import type { AccountsRepo } from '@portcullis/accounts';
import type { DenyList } from '@portcullis/claims';
import type { Db } from '@portcullis/db';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { AuthConfig } from '../config.js';
import type { ClientsRepo } from '../data/clients-repo.js';
import { createOidcAdapterFactory } from '../data/oidc-adapter.js';
import { htmlHeaders } from '../security-headers.js';
import { deviceConfirmPage, deviceInputPage, messagePage } from '../interactions/views.js';
import { createFindAccount } from './account.js';
import { memoizeInRequest } from './request-memo.js';
import { createExtraTokenClaims, customizeJwt, isApiScope, resourceServerInfo } from './claims.js';
import type { DeviceGuard } from './device-guard.js';
import type { KeyRing } from './keys.js';
import { createLogoutGuard } from './subject-logout.js';

export interface ProviderSetup {
  config: AuthConfig;
  db: Db;
  accounts: AccountsRepo;
  clients: ClientsRepo;
  keys: KeyRing;
  cookieKeys: string[];
  deviceGuard: DeviceGuard;
  /** Logout everywhere: artifacts of a denied subject issued before the logout are gone. */
  denyList: Pick<DenyList, 'isDenied' | 'sync'>;
}

const DAY = 24 * 60 * 60;
export const REFRESH_TOKEN_TTL = 30 * DAY;
export const ID_TOKEN_TTL = 60 * 60;
export const SESSION_COOKIE = '_session';
export const INTERACTION_RESUME_COOKIE = '_interaction_resume';

/** Extra client metadata: `roles` (client-credentials tokens) and `first_party` (skips consent). */
function validateClientMetadata(_ctx: KoaContextWithOIDC | undefined, key: string, value: unknown) {
  if (key === 'roles' && value !== undefined) {
    if (!Array.isArray(value) || !value.every((r) => typeof r === 'string')) {
      throw new TypeError('roles must be an array of strings');
    }
  }
  if (key === 'first_party' && value !== undefined && typeof value !== 'boolean') {
    throw new TypeError('first_party must be a boolean');
  }
}

/**
 * DPoP nonces (README "DPoP") are HMACs of the time step under this secret: every
 * instance must derive the same one, so it comes from the shared cookie key.
 */
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

/**
 * oidc-provider settings. Decisions: authorization code only (no implicit, hybrid or
 * password), PKCE S256 for every client, refresh tokens rotated on every use and issued
 * to any client allowed the refresh_token grant, JWT access tokens for the API audience
 * (RFC 9068), client secrets compared by hash (see create-provider.ts), DPoP-bound
 * tokens for any client that sends a proof (RFC 9449).
 */
export function providerConfiguration(s: ProviderSetup): Configuration {
  // findAccount and extraTokenClaims both read the user: once per request.
  const accounts: AccountsRepo = {
    ...s.accounts,
    findById: (id) => memoizeInRequest(`account:${id}`, () => s.accounts.findById(id)),
  };
  const { config } = s;
  const apiResource = config.apiAudience;
  const isLocalhostDev = config.env !== 'production';

  return {
    adapter: createOidcAdapterFactory(s.db, s.clients, createLogoutGuard(s.denyList), {
      refreshReuseInterval: config.refreshReuseInterval,
      // Far longer than a rotation that goes well takes (milliseconds), and shorter than a
      // client of an abandoned one waits for its 503 (one DB_QUERY_TIMEOUT at least).
      rotationBound: config.dbQueryTimeoutMs / 2000,
    }),
    clients: [],
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
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    scopes: ['openid', 'offline_access', 'profile', 'email'],
    responseTypes: ['code'],
    // oidc-provider 9 implements S256 only: `plain` is refused as an unsupported method.
    pkce: { required: () => true },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: config.signingAlg,
      token_endpoint_auth_method: 'client_secret_basic',
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      userinfoSigningAlgValues: ['RS256', 'ES256'],
      requestObjectSigningAlgValues: ['RS256', 'ES256'],
      clientAuthSigningAlgValues: ['RS256', 'ES256'],
    },
    extraClientMetadata: {
      properties: ['roles', 'first_party'],
      validator: validateClientMetadata,
    },
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: () => true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    extraTokenClaims: createExtraTokenClaims(accounts) as never,
    formats: { customizers: { jwt: customizeJwt as never } },
    ttl: {
      AccessToken: config.accessTokenTtl,
      ClientCredentials: config.accessTokenTtl,
      AuthorizationCode: 60,
      DeviceCode: 10 * 60,
      IdToken: ID_TOKEN_TTL,
      RefreshToken: REFRESH_TOKEN_TTL,
      Grant: REFRESH_TOKEN_TTL,
      Session: 14 * DAY,
      Interaction: 60 * 60,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    routes: {
      authorization: '/authorize',
      jwks: '/.well-known/jwks.json',
      token: '/token',
      device_authorization: '/device/auth',
      code_verification: '/device',
      revocation: '/token/revocation',
      userinfo: '/me',
      end_session: '/session/end',
    },
    features: {
      devInteractions: { enabled: false },
      dPoP: dpopFeature(config, s.cookieKeys),
      clientCredentials: { enabled: true },
      revocation: {
        enabled: true,
        // A client may revoke only its own tokens (RFC 7009 §2.1); others are ignored silently.
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      userinfo: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => apiResource,
        // The access token is for the API whenever the requested (else granted) scope
        // holds an API scope; otherwise it is an opaque token for /me. So a client with
        // one grant gets both: the API JWT from the code exchange, and a userinfo token
        // from a refresh_token request narrowed to OIDC scopes (`scope=openid email`).
        useGrantedResource: async (ctx, model) => {
          const requested = (ctx.oidc.params as { scope?: string } | undefined)?.scope;
          const scope = requested ?? (model as { scope?: string }).scope ?? '';
          return String(scope).split(' ').some(isApiScope);
        },
        getResourceServerInfo: resourceServerInfo(apiResource, config.accessTokenTtl, s.keys),
      },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        async userCodeInputSource(ctx, form, _out, err) {
          const error = err as { name?: string; userCode?: string } | undefined;
          let message: string | undefined;
          if (error?.name === 'NotFoundError') {
            await s.deviceGuard.recordWrongUserCode(ctx);
            message = 'That code is not valid. Check it and try again.';
          } else if (error?.name === 'ExpiredError')
            message = 'That code has expired. Start again on your device.';
          else if (error?.name === 'AlreadyUsedError') message = 'That code was already used.';
          else if (error?.name === 'AbortedError') message = 'The sign-in was cancelled.';
          else if (error?.name === 'NoCodeError') message = 'Enter the code shown on your device.';
          else if (error) message = 'Something went wrong. Try again.';
          htmlHeaders(ctx);
          ctx.body = deviceInputPage(form, message);
        },
        async userCodeConfirmSource(ctx, form, client, _deviceInfo, userCode) {
          htmlHeaders(ctx);
          ctx.body = deviceConfirmPage(form, client.clientName ?? client.clientId, userCode);
        },
        async successSource(ctx) {
          htmlHeaders(ctx);
          ctx.body = messagePage(
            'Device connected',
            'You can close this page and return to your device.',
          );
        },
      },
    },
    async renderError(ctx, out) {
      htmlHeaders(ctx);
      ctx.type = 'html';
      ctx.body = messagePage('Sign-in error', `${out.error}: ${out.error_description ?? ''}`);
    },
  };
}
