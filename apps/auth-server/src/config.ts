import { databaseVariables } from '@portcullis/db';
import { z } from 'zod';
import { ConfigError } from '@portcullis/observability';

const boolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    AUTH_PORT: z.coerce.number().int().min(0).max(65535).default(4000),
    ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(4001),
    ISSUER: z.url().default('http://localhost:4000'),
    API_AUDIENCE: z.url().default('http://localhost:3000'),
    ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
    /** DB_QUERY_TIMEOUT and DB_START_TIMEOUT, seconds (README "Database faults"). */
    ...databaseVariables,
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// URL')
      .optional(),
    /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
    REDIS_KEY_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9:_.-]{1,64}$/, 'must be 1..64 characters of A-Z a-z 0-9 : _ . -')
      .default('portcullis:'),
    DATA_DIR: z.string().min(1).default('./data'),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info'),
    /** Access-token lifetime in seconds: the spec allows 15 min up to (not including) 1 h. */
    ACCESS_TOKEN_TTL: z.coerce.number().int().min(60).max(3599).default(900),
    SIGNING_ALG: z.enum(['RS256', 'ES256']).default('RS256'),
    /**
     * Seconds in which an honest retry of a just-rotated refresh token is tolerated while
     * its successor is unused (README "Refresh-token rotation"); 0 turns it off.
     */
    REFRESH_REUSE_INTERVAL: z.coerce.number().int().min(0).max(60).default(5),
    /** true: DPoP proofs sent to /token must carry a server-provided nonce (README "DPoP"). */
    DPOP_NONCE: boolean.default(false),
    /** Seconds a new signing key is published before it signs (publish before sign). */
    SIGNING_KEY_PUBLISH_LEAD: z.coerce.number().int().min(1).max(86_400).default(60),
    ALERT_WEBHOOK_URL: z.url().optional(),
    SEED_DEMO: boolean.optional(),
    /** Comma-separated secrets for signing cookies; generated in development when absent. */
    COOKIE_KEYS: z.string().min(32).optional(),
    /** 32 bytes, base64url: encrypts signing keys at rest; generated under DATA_DIR outside production. */
    KEY_ENCRYPTION_KEY: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 bytes, base64url-encoded (43 characters)')
      .optional(),
  })
  .superRefine((env, ctx) => {
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
  });

export type AuthConfig = Readonly<{
  env: 'development' | 'test' | 'production';
  port: number;
  adminPort: number;
  issuer: string;
  apiAudience: string;
  adminToken: string | undefined;
  databaseUrl: string | undefined;
  /** Bound of one database round trip (DB_QUERY_TIMEOUT). */
  dbQueryTimeoutMs: number;
  /** How long startup waits for PostgreSQL (DB_START_TIMEOUT). */
  dbStartTimeoutMs: number;
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  dataDir: string;
  logLevel: string;
  accessTokenTtl: number;
  signingAlg: 'RS256' | 'ES256';
  refreshReuseInterval: number;
  dpopNonce: boolean;
  signingKeyPublishLead: number;
  alertWebhookUrl: string | undefined;
  seedDemo: boolean;
  cookieKeys: string[] | undefined;
  keyEncryptionKey: string | undefined;
}>;

export { ConfigError };

/** Parses the environment once; every problem is listed, each naming its variable. */
export function parseAuthConfig(env: Record<string, string | undefined>): AuthConfig {
  // An empty variable means unset, as a shell `FOO= cmd` or a blank compose entry intends.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = result.data;
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.AUTH_PORT,
    adminPort: e.ADMIN_PORT,
    issuer: e.ISSUER,
    apiAudience: e.API_AUDIENCE,
    adminToken: e.ADMIN_TOKEN,
    databaseUrl: e.DATABASE_URL,
    dbQueryTimeoutMs: e.DB_QUERY_TIMEOUT * 1000,
    dbStartTimeoutMs: e.DB_START_TIMEOUT * 1000,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    dataDir: e.DATA_DIR,
    logLevel: e.LOG_LEVEL,
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    signingAlg: e.SIGNING_ALG,
    refreshReuseInterval: e.REFRESH_REUSE_INTERVAL,
    dpopNonce: e.DPOP_NONCE,
    signingKeyPublishLead: e.SIGNING_KEY_PUBLISH_LEAD,
    alertWebhookUrl: e.ALERT_WEBHOOK_URL,
    seedDemo: e.SEED_DEMO ?? e.NODE_ENV === 'development',
    cookieKeys: e.COOKIE_KEYS?.split(',').map((k) => k.trim()),
    keyEncryptionKey: e.KEY_ENCRYPTION_KEY,
  });
}
