import {
  signInLimitsOf,
  signInLimitVariables,
  signupVerifyVariables,
  type SignInLimits,
} from '@portcullis/accounts';
import {
  databaseSettingsOf,
  databaseVariables,
  redisSettingsOf,
  redisVariables,
  type DatabaseSettings,
  type RedisSettings,
} from '@portcullis/db';
import { z } from 'zod';
import { LANGUAGES, type UiSettings } from './ui-settings.js';
import {
  agentClientSettingsOf,
  agentClientVariables,
  type AgentClientSettings,
} from './agent-settings.js';
import { resourceVariables } from './resource-settings.js';
import {
  ConfigError,
  parseEnvironment,
  placeholderSecrets,
  portVariable,
  processSettingsOf,
  processVariables,
  proxyVariables,
  webOriginOf,
  webVariables,
  tokenVariables,
  type ProcessSettings,
} from '@portcullis/observability';

/** Default of CLIENT_ASSERTION_MAX_LIFETIME: Authlib's PrivateKeyJWT signs `exp` an hour ahead. */
export const DEFAULT_MAX_ASSERTION_LIFETIME = 60 * 60;

/** Failed client authentications, each limit per window (CLIENT_AUTH_*). */
export interface ClientAuthLimits {
  /** From one address, whatever client ids it names (CLIENT_AUTH_ADDRESS_LIMIT). */
  perAddress: number;
  /** For one client from one address (CLIENT_AUTH_CLIENT_ADDRESS_LIMIT). */
  perClientAndAddress: number;
  /** For one client from all addresses together (CLIENT_AUTH_CLIENT_LIMIT). */
  perClient: number;
  windowSec: number;
}

const boolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const limitCount = z.coerce.number().int().min(1).max(1_000_000);

const CSS_COLOR = /^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/;

const HOST_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

const schema = z
  .object({
    /** NODE_ENV, DATA_DIR, LOG_LEVEL; ISSUER, API_AUDIENCE: read alike by every app. */
    ...processVariables,
    ...tokenVariables,
    AUTH_PORT: portVariable(4000),
    ADMIN_PORT: portVariable(4001),
    /** Where the admin API listens: loopback unless a container publishes it (README "Deploying"). */
    ADMIN_HOST: z.union([z.ipv4(), z.ipv6()]).default('127.0.0.1'),
    ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    /** DATABASE_URL, DB_QUERY_TIMEOUT, DB_START_TIMEOUT (README "Database faults"). */
    ...databaseVariables,
    /** REDIS_URL, REDIS_KEY_PREFIX. */
    ...redisVariables,
    /** Access-token lifetime in seconds: 60 up to (not including) one hour (README "Configuration"). */
    ACCESS_TOKEN_TTL: z.coerce.number().int().min(60).max(3599).default(900),
    SIGNING_ALG: z.enum(['RS256', 'ES256']).default('RS256'),
    /** Seconds an honest retry of a just-rotated refresh token is tolerated; 0 turns it off. */
    REFRESH_REUSE_INTERVAL: z.coerce.number().int().min(0).max(60).default(5),
    /** LOGIN_IP_LIMIT, LOGIN_ACCOUNT_LIMIT, LOGIN_LIMIT_WINDOW: one limit with the API's. */
    ...signInLimitVariables,
    /** Failed client authentications per window: by address, client and address, client. */
    CLIENT_AUTH_ADDRESS_LIMIT: limitCount.default(100),
    CLIENT_AUTH_CLIENT_ADDRESS_LIMIT: limitCount.default(20),
    CLIENT_AUTH_CLIENT_LIMIT: limitCount.default(200),
    /** A renamed variable is refused with a message naming its successors. */
    CLIENT_AUTH_IP_LIMIT: z
      .undefined({
        error:
          'was renamed: CLIENT_AUTH_CLIENT_ADDRESS_LIMIT counts per client and address, ' +
          'CLIENT_AUTH_ADDRESS_LIMIT per address',
      })
      .optional(),
    /** Longest `exp - now` of a client assertion (s); at most an hour (not a standing key). */
    CLIENT_ASSERTION_MAX_LIFETIME: z.coerce
      .number()
      .int()
      .min(10)
      .max(3600)
      .default(DEFAULT_MAX_ASSERTION_LIFETIME),
    CLIENT_AUTH_LIMIT_WINDOW: z.coerce
      .number()
      .int()
      .min(1)
      .max(365 * 86_400)
      .default(900),
    ...proxyVariables,
    /** true: DPoP proofs sent to /token must carry a server-provided nonce (README "DPoP"). */
    DPOP_NONCE: boolean.default(false),
    /** true: every client must push its authorization request first (README "PAR"). */
    REQUIRE_PAR: boolean.default(false),
    /** REGISTRATION*, CLIENT_ID_METADATA_* (README "Dynamic client registration"). */
    ...agentClientVariables,
    /** RESOURCES: retired; APIs are registered as data (docs/roles.md "Resource servers"). */
    ...resourceVariables,
    /** Seconds a new signing key is published before it signs (publish before sign). */
    /** The admin console (README "Admin console"): the API's URL for its status page. */
    CONSOLE_API_URL: z.url().optional(),
    /** Seconds after a sign-in within which the console allows destructive actions. */
    CONSOLE_STEP_UP_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
    SIGNING_KEY_PUBLISH_LEAD: z.coerce.number().int().min(1).max(86_400).default(60),
    ALERT_WEBHOOK_URL: z.url().optional(),
    SEED_DEMO: boolean.optional(),
    /** The browser demo's origin: the seed registers `${origin}/callback` for demo-spa. */
    ...webVariables,
    /** Comma-separated secrets for signing cookies; generated in development when absent. */
    COOKIE_KEYS: z.string().min(32).optional(),
    /** 32 bytes, base64url: encrypts signing keys at rest; generated under DATA_DIR outside production. */
    KEY_ENCRYPTION_KEY: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 bytes, base64url-encoded (43 characters)')
      .optional(),
    /** WebAuthn relying party id (README "Passkeys"): the issuer's host or a parent domain. */
    WEBAUTHN_RP_ID: z.string().regex(HOST_NAME, 'must be a lower-case host name').optional(),
    /** The pages' look and language (README "Branding and languages"). */
    UI_DEFAULT_LANGUAGE: z.enum(LANGUAGES).default('en'),
    BRAND_NAME: z.string().trim().min(1).max(60).default('Portcullis'),
    BRAND_LOGO_URL: z
      .string()
      .refine((v) => v.startsWith('https://') || /^\/[^/\\]/.test(v), 'must be https:// or a path')
      .optional(),
    BRAND_COLOR: z
      .string()
      .regex(CSS_COLOR, 'must be a hex colour like #1a56db')
      .default('#1a56db'),
    BRAND_BACKGROUND: z
      .string()
      .regex(CSS_COLOR, 'must be a hex colour like #f4f5f7')
      .default('#f4f5f7'),
    /** Outgoing mail (README "E-mail"): unset, mail goes to the log and DATA_DIR/mail. */
    SMTP_URL: z
      .url()
      .refine((v) => /^smtps?:\/\//.test(v), 'must be smtp:// or smtps://')
      .optional(),
    MAIL_FROM: z.string().min(3).max(200).default('Portcullis <no-reply@localhost>'),
    /** Self-service accounts (README "Sign-up and password reset"). */
    SIGNUP: z.enum(['off', 'open']).default('off'),
    SIGNUP_ROLES: z
      .string()
      .regex(/^[a-z][a-z0-9_-]*(,[a-z][a-z0-9_-]*)*$|^$/, 'must be a comma-separated role list')
      .default('viewer'),
    /** SIGNUP_VERIFY: one rule with the API's POST /login. */
    ...signupVerifyVariables,
    PASSWORD_RESET_TTL: z.coerce.number().int().min(900).max(3600).default(1800),
    EMAIL_VERIFICATION_TTL: z.coerce
      .number()
      .int()
      .min(900)
      .max(7 * 86_400)
      .default(86_400),
    /** Mail-sending account requests (sign-up, forgotten password, …) per address and per IP. */
    ACCOUNT_MAIL_ADDRESS_LIMIT: limitCount.default(3),
    ACCOUNT_MAIL_IP_LIMIT: limitCount.default(20),
    ACCOUNT_MAIL_LIMIT_WINDOW: z.coerce.number().int().min(60).max(86_400).default(3600),
  })
  .superRefine((env, ctx) => {
    const issuerHost = URL.parse(env.ISSUER)?.hostname;
    const rpId = env.WEBAUTHN_RP_ID;
    const valid = rpId !== undefined && HOST_NAME.test(rpId);
    if (valid && issuerHost !== rpId && !issuerHost?.endsWith(`.${rpId}`)) {
      ctx.addIssue({
        code: 'custom',
        path: ['WEBAUTHN_RP_ID'],
        message: `must be the issuer's host (${issuerHost}) or a domain above it`,
      });
    }
    if (env.NODE_ENV !== 'production') return;
    if (!env.ISSUER.startsWith('https://')) {
      ctx.addIssue({ code: 'custom', path: ['ISSUER'], message: 'must be https in production' });
    }
    if (!env.ADMIN_TOKEN) {
      ctx.addIssue({ code: 'custom', path: ['ADMIN_TOKEN'], message: 'is required in production' });
    }
    if (env.SEED_DEMO) {
      ctx.addIssue({
        code: 'custom',
        path: ['SEED_DEMO'],
        message: 'demo seed is refused in production',
      });
    }
    if (!env.COOKIE_KEYS) {
      ctx.addIssue({ code: 'custom', path: ['COOKIE_KEYS'], message: 'is required in production' });
    }
    if (!env.KEY_ENCRYPTION_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: ['KEY_ENCRYPTION_KEY'],
        message: 'is required in production',
      });
    }
    for (const { name, message } of placeholderSecrets(env, SECRETS)) {
      ctx.addIssue({ code: 'custom', path: [name], message });
    }
  });

/** Checked with placeholderSecrets in production. */
const SECRETS = [
  'ADMIN_TOKEN',
  'COOKIE_KEYS',
  'KEY_ENCRYPTION_KEY',
  'DATABASE_URL',
  'REDIS_URL',
  'SMTP_URL',
];

type OwnConfig = Readonly<{
  port: number;
  adminPort: number;
  adminHost: string;
  issuer: string;
  apiAudience: string;
  adminToken: string | undefined;
  accessTokenTtl: number;
  signingAlg: 'RS256' | 'ES256';
  refreshReuseInterval: number;
  /** Failed sign-ins per IP and per account (LOGIN_*), shared with the API's POST /login. */
  signIn: SignInLimits;
  /** Failed client authentications (CLIENT_AUTH_*). */
  clientAuth: Readonly<ClientAuthLimits>;
  /** CLIENT_ASSERTION_MAX_LIFETIME: seconds a client assertion's exp may be ahead. */
  clientAssertionMaxLifetime: number;
  /** TRUST_PROXY: the client's address from X-Forwarded-For (README "Configuration"). */
  trustProxy: boolean;
  dpopNonce: boolean;
  requirePar: boolean;
  /** REGISTRATION*, CLIENT_ID_METADATA_*: clients nobody registered by hand. */
  agentClients: AgentClientSettings;
  signingKeyPublishLead: number;
  /** The admin console: the API it reports on (CONSOLE_API_URL, else API_AUDIENCE) and its step-up window. */
  console: Readonly<{ apiUrl: string; stepUpSeconds: number }>;
  alertWebhookUrl: string | undefined;
  seedDemo: boolean;
  /** The browser demo's origin (WEB_ORIGIN, or http://localhost:$WEB_PORT), for the seed. */
  demoWebOrigin: string;
  cookieKeys: string[] | undefined;
  keyEncryptionKey: string | undefined;
  /** WEBAUTHN_RP_ID; unset: the issuer's host. */
  webauthnRpId: string | undefined;
  /** Language and brand of the pages (UI_DEFAULT_LANGUAGE, BRAND_*). */
  ui: UiSettings;
  /** SMTP_URL (unset: the development mailbox), MAIL_FROM. */
  mail: Readonly<{ smtpUrl: string | undefined; from: string }>;
  /** SIGNUP*, PASSWORD_RESET_TTL, EMAIL_VERIFICATION_TTL, ACCOUNT_MAIL_*. */
  selfService: Readonly<{
    signup: 'off' | 'open';
    signupRoles: string[];
    signupVerify: 'before-sign-in' | 'before-roles';
    passwordResetTtl: number;
    emailVerificationTtl: number;
    mailLimits: Readonly<{ perAddress: number; perIp: number; windowSec: number }>;
  }>;
}>;

export type AuthConfig = ProcessSettings & DatabaseSettings & RedisSettings & OwnConfig;

export { ConfigError };

/** Parses the environment once; every problem is listed, each naming its variable. */
export function parseAuthConfig(env: Record<string, string | undefined>): AuthConfig {
  const e = parseEnvironment(schema, env);
  return Object.freeze({
    ...processSettingsOf(e),
    ...databaseSettingsOf(e),
    ...redisSettingsOf(e),
    port: e.AUTH_PORT,
    adminPort: e.ADMIN_PORT,
    adminHost: e.ADMIN_HOST,
    issuer: e.ISSUER,
    apiAudience: e.API_AUDIENCE,
    adminToken: e.ADMIN_TOKEN,
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    signingAlg: e.SIGNING_ALG,
    refreshReuseInterval: e.REFRESH_REUSE_INTERVAL,
    signIn: signInLimitsOf(e),
    clientAuth: Object.freeze({
      perAddress: e.CLIENT_AUTH_ADDRESS_LIMIT,
      perClientAndAddress: e.CLIENT_AUTH_CLIENT_ADDRESS_LIMIT,
      perClient: e.CLIENT_AUTH_CLIENT_LIMIT,
      windowSec: e.CLIENT_AUTH_LIMIT_WINDOW,
    }),
    clientAssertionMaxLifetime: e.CLIENT_ASSERTION_MAX_LIFETIME,
    trustProxy: e.TRUST_PROXY,
    dpopNonce: e.DPOP_NONCE,
    requirePar: e.REQUIRE_PAR,
    agentClients: agentClientSettingsOf(e),
    signingKeyPublishLead: e.SIGNING_KEY_PUBLISH_LEAD,
    console: {
      apiUrl: (e.CONSOLE_API_URL ?? e.API_AUDIENCE).replace(/\/+$/, ''),
      stepUpSeconds: e.CONSOLE_STEP_UP_SECONDS,
    },
    alertWebhookUrl: e.ALERT_WEBHOOK_URL,
    seedDemo: e.SEED_DEMO ?? e.NODE_ENV === 'development',
    demoWebOrigin: webOriginOf(e),
    cookieKeys: e.COOKIE_KEYS?.split(',').map((k) => k.trim()),
    keyEncryptionKey: e.KEY_ENCRYPTION_KEY,
    webauthnRpId: e.WEBAUTHN_RP_ID,
    ui: {
      defaultLanguage: e.UI_DEFAULT_LANGUAGE,
      brand: {
        productName: e.BRAND_NAME,
        logoUrl: e.BRAND_LOGO_URL,
        primaryColor: e.BRAND_COLOR,
        backgroundColor: e.BRAND_BACKGROUND,
      },
    },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    selfService: {
      signup: e.SIGNUP,
      signupRoles: e.SIGNUP_ROLES ? e.SIGNUP_ROLES.split(',') : [],
      signupVerify: e.SIGNUP_VERIFY,
      passwordResetTtl: e.PASSWORD_RESET_TTL,
      emailVerificationTtl: e.EMAIL_VERIFICATION_TTL,
      mailLimits: {
        perAddress: e.ACCOUNT_MAIL_ADDRESS_LIMIT,
        perIp: e.ACCOUNT_MAIL_IP_LIMIT,
        windowSec: e.ACCOUNT_MAIL_LIMIT_WINDOW,
      },
    },
  });
}
