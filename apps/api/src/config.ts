import {
  signInLimitsOf,
  signInLimitVariables,
  signupVerifyVariables,
  type SignInLimits,
  type SignupVerify,
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
import {
  ConfigError,
  parseEnvironment,
  placeholderSecrets,
  portVariable,
  processSettingsOf,
  processVariables,
  proxyVariables,
  tokenVariables,
  type ProcessSettings,
} from '@portcullis/observability';

const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

const seconds = z.coerce
  .number()
  .int()
  .min(1)
  .max(365 * 86_400);
const count = z.coerce.number().int().min(1).max(1_000_000);

const schema = z.object({
  ...processVariables,
  ...tokenVariables,
  API_PORT: portVariable(3000),
  /** Where the API fetches the issuer's public keys; defaults to the issuer's JWKS path. */
  JWKS_URL: z.url().optional(),
  /** DATABASE_URL, DB_QUERY_TIMEOUT, DB_START_TIMEOUT (docs/robustness.md#database-faults-what-a-503-leaves-behind). */
  ...databaseVariables,
  ...redisVariables,
  CORS_ORIGINS: csv.default([]),
  ...proxyVariables,
  /** The API's public base URL, which DPoP proofs name in `htu`; unset: the request's own URL. */
  PUBLIC_URL: z
    .url()
    .regex(/^https?:\/\/[^?#]*$/, 'must be an http(s) URL without query or fragment')
    .optional(),
  DPOP_NONCE: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .default(false),
  /** How far a DPoP proof's `iat` may be from now, seconds, besides the 30 s clock tolerance. */
  DPOP_IAT_WINDOW: z.coerce.number().int().min(1).max(3600).default(60),
  SESSION_IDLE_TIMEOUT: seconds.default(1800),
  SESSION_ABSOLUTE_TIMEOUT: seconds.default(86_400),
  /** How long a logout-everywhere row stays: must outlive the longest refresh-token grant. */
  LOGOUT_ALL_REVOCATION_TTL: seconds.default(30 * 86_400),
  API_KEY_RATE_LIMIT: count.default(600),
  API_KEY_RATE_WINDOW: seconds.default(60),
  /** Requests per window per JWT subject, Bearer and DPoP alike. */
  JWT_RATE_LIMIT: count.default(1200),
  JWT_RATE_WINDOW: seconds.default(60),
  /** LOGIN_IP_LIMIT, LOGIN_ACCOUNT_LIMIT, LOGIN_LIMIT_WINDOW: one limit with the auth server's. */
  ...signInLimitVariables,
  /** SIGNUP_VERIFY: an unverified address is refused here as at the auth server. */
  ...signupVerifyVariables,
  ANON_RATE_LIMIT: count.default(300),
  ANON_RATE_WINDOW: seconds.default(60),
  // Step-up (README "Step-up").
  /** `off` skips every step-up rule: for a development auth server without MFA only. */
  STEP_UP: z.enum(['required', 'off']).default('required'),
  /** Largest age of the sign-in (now - auth_time) a step-up route accepts. */
  STEP_UP_MAX_AGE: seconds.default(300),
  /** A payment above this amount (minor units, e.g. cents) needs a step-up sign-in. */
  STEP_UP_PAYMENT_AMOUNT: z.coerce
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .default(50_000),
  UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .default(50 * 1024 * 1024),
  /** `disk` (one instance) or `s3`: a bucket every instance shares (README "Deploying"). */
  UPLOADS_STORE: z.enum(['disk', 's3']).default('disk'),
  /** Where uploads are stored with UPLOADS_STORE=disk; default `${DATA_DIR}/uploads`. */
  UPLOADS_DIR: z.string().min(1).optional(),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name (3-63 of a-z 0-9 . -)')
    .optional(),
  S3_REGION: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, 'must be a region such as us-east-1')
    .default('us-east-1'),
  S3_ENDPOINT: z
    .url()
    .regex(/^https?:\/\//, 'must be an http(s) URL')
    .optional(),
  /** `true` addresses `endpoint/bucket/key` (MinIO) instead of `bucket.endpoint/key`. */
  S3_FORCE_PATH_STYLE: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .default(false),
  /** Both or neither; neither: the AWS SDK's default chain. */
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  PRESIGN_TTL: seconds.default(300),
  /** HMAC key of pre-signed URLs; unset outside production: a secret shared through the database. */
  UPLOAD_SIGNING_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  STREAMS_PER_PRINCIPAL: count.default(5),
  /** `: ping` comment interval of GET /stream; also when revocation is rechecked. */
  STREAM_HEARTBEAT_MS: z.coerce.number().int().min(10).max(300_000).default(15_000),
  /** How often each instance reads new rows of the event outbox. */
  EVENTS_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
});

type OwnConfig = Readonly<{
  port: number;
  issuer: string;
  audience: string;
  jwksUrl: string;
  corsOrigins: readonly string[];
  trustProxy: boolean;
  /** SIGNUP_VERIFY: whether POST /login refuses an unverified address. */
  signupVerify: SignupVerify;
  sessions: Readonly<{
    idleTimeoutSec: number;
    absoluteTimeoutSec: number;
    logoutAllTtlSec: number;
  }>;
  rateLimits: Readonly<Record<'apiKey' | 'jwt' | 'anonymous', RateLimitSetting>> &
    Readonly<{ signIn: SignInLimits }>;
  uploads: Readonly<{
    maxBytes: number;
    store: 'disk' | 's3';
    dir: string;
    s3: S3Settings | undefined;
    presignTtlSec: number;
    signingKey: string | undefined;
  }>;
  streams: Readonly<{ perPrincipal: number; heartbeatMs: number; pollMs: number }>;
  dpop: Readonly<{ publicUrl: string | undefined; nonce: boolean; iatWindowSec: number }>;
  /** README "Step-up": whether rules are enforced, the sign-in age they allow, the payment amount. */
  stepUp: Readonly<{ enforced: boolean; maxAgeSec: number; paymentAmount: number }>;
}>;

/** The bucket of UPLOADS_STORE=s3 (S3_*). */
export type S3Settings = Readonly<{
  bucket: string;
  region: string;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  credentials: Readonly<{ accessKeyId: string; secretAccessKey: string }> | undefined;
}>;

/** Checked with placeholderSecrets in production. */
const SECRETS = ['UPLOAD_SIGNING_KEY', 'S3_SECRET_ACCESS_KEY', 'DATABASE_URL', 'REDIS_URL'];

export type ApiConfig = ProcessSettings & DatabaseSettings & RedisSettings & OwnConfig;

export type RateLimitSetting = Readonly<{ points: number; durationSec: number }>;

export { ConfigError };

/** A bucket named without UPLOADS_STORE=s3 (or the reverse), or half a key pair. */
function uploadStoreProblems(e: z.output<typeof schema>): string[] {
  const problems: string[] = [];
  if (e.UPLOADS_STORE === 's3' && !e.S3_BUCKET) {
    problems.push('S3_BUCKET: required with UPLOADS_STORE=s3');
  }
  if (e.UPLOADS_STORE === 'disk' && e.S3_BUCKET) {
    problems.push('UPLOADS_STORE: is disk while S3_BUCKET is set; set UPLOADS_STORE=s3');
  }
  if (e.S3_ACCESS_KEY_ID && !e.S3_SECRET_ACCESS_KEY) {
    problems.push('S3_SECRET_ACCESS_KEY: required with S3_ACCESS_KEY_ID');
  }
  if (e.S3_SECRET_ACCESS_KEY && !e.S3_ACCESS_KEY_ID) {
    problems.push('S3_ACCESS_KEY_ID: required with S3_SECRET_ACCESS_KEY');
  }
  return problems;
}

/** Parses the environment once; every problem is listed, each naming its variable. */
export function parseApiConfig(env: Record<string, string | undefined>): ApiConfig {
  const e = parseEnvironment(schema, env);
  const problems: string[] = [];
  if (e.NODE_ENV === 'production') {
    if (!e.ISSUER.startsWith('https://')) problems.push('ISSUER: must be https in production');
    if (e.UPLOAD_SIGNING_KEY === undefined)
      problems.push('UPLOAD_SIGNING_KEY: required in production');
    if (e.STEP_UP === 'off') problems.push('STEP_UP: off is not allowed in production');
    for (const { name, message } of placeholderSecrets(e, SECRETS)) {
      problems.push(`${name}: ${message}`);
    }
  }
  problems.push(...uploadStoreProblems(e));
  if (problems.length) throw new ConfigError(problems);
  const credentials =
    e.S3_ACCESS_KEY_ID && e.S3_SECRET_ACCESS_KEY
      ? { accessKeyId: e.S3_ACCESS_KEY_ID, secretAccessKey: e.S3_SECRET_ACCESS_KEY }
      : undefined;
  return Object.freeze({
    ...processSettingsOf(e),
    ...databaseSettingsOf(e),
    ...redisSettingsOf(e),
    port: e.API_PORT,
    issuer: e.ISSUER,
    audience: e.API_AUDIENCE,
    jwksUrl: e.JWKS_URL ?? new URL('/.well-known/jwks.json', e.ISSUER).toString(),
    corsOrigins: Object.freeze(e.CORS_ORIGINS),
    trustProxy: e.TRUST_PROXY,
    signupVerify: e.SIGNUP_VERIFY,
    sessions: Object.freeze({
      idleTimeoutSec: e.SESSION_IDLE_TIMEOUT,
      absoluteTimeoutSec: e.SESSION_ABSOLUTE_TIMEOUT,
      logoutAllTtlSec: e.LOGOUT_ALL_REVOCATION_TTL,
    }),
    rateLimits: Object.freeze({
      apiKey: { points: e.API_KEY_RATE_LIMIT, durationSec: e.API_KEY_RATE_WINDOW },
      jwt: { points: e.JWT_RATE_LIMIT, durationSec: e.JWT_RATE_WINDOW },
      signIn: signInLimitsOf(e),
      anonymous: { points: e.ANON_RATE_LIMIT, durationSec: e.ANON_RATE_WINDOW },
    }),
    uploads: Object.freeze({
      maxBytes: e.UPLOAD_MAX_BYTES,
      store: e.UPLOADS_STORE,
      dir: e.UPLOADS_DIR ?? `${e.DATA_DIR.replace(/\/+$/, '')}/uploads`,
      s3:
        e.UPLOADS_STORE === 's3'
          ? Object.freeze({
              bucket: e.S3_BUCKET!,
              region: e.S3_REGION,
              endpoint: e.S3_ENDPOINT,
              forcePathStyle: e.S3_FORCE_PATH_STYLE,
              credentials: credentials && Object.freeze(credentials),
            })
          : undefined,
      presignTtlSec: e.PRESIGN_TTL,
      signingKey: e.UPLOAD_SIGNING_KEY,
    }),
    dpop: Object.freeze({
      publicUrl: e.PUBLIC_URL,
      nonce: e.DPOP_NONCE,
      iatWindowSec: e.DPOP_IAT_WINDOW,
    }),
    stepUp: Object.freeze({
      enforced: e.STEP_UP === 'required',
      maxAgeSec: e.STEP_UP_MAX_AGE,
      paymentAmount: e.STEP_UP_PAYMENT_AMOUNT,
    }),
    streams: Object.freeze({
      perPrincipal: e.STREAMS_PER_PRINCIPAL,
      heartbeatMs: e.STREAM_HEARTBEAT_MS,
      pollMs: e.EVENTS_POLL_MS,
    }),
  });
}
