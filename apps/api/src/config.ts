import { z } from 'zod';

const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  API_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  ISSUER: z.url().default('http://localhost:4000'),
  API_AUDIENCE: z.url().default('http://localhost:3000'),
  /** Where the API fetches the issuer's public keys; defaults to the issuer's JWKS path. */
  JWKS_URL: z.url().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Browser origins allowed by CORS; none by default. */
  CORS_ORIGINS: csv.default([]),
  /** Trust X-Forwarded-For only when a proxy you run sets it. */
  TRUST_PROXY: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .default(false),
});

export type ApiConfig = Readonly<{
  env: 'development' | 'test' | 'production';
  port: number;
  issuer: string;
  audience: string;
  jwksUrl: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  dataDir: string;
  logLevel: string;
  corsOrigins: readonly string[];
  trustProxy: boolean;
}>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; every problem is listed, each naming its variable. */
export function parseApiConfig(env: Record<string, string | undefined>): ApiConfig {
  // An empty variable means unset, as a shell `FOO= cmd` or a blank compose entry intends.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = result.data;
  if (e.NODE_ENV === 'production' && !e.ISSUER.startsWith('https://')) {
    throw new ConfigError(['ISSUER: must be https in production']);
  }
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.API_PORT,
    issuer: e.ISSUER,
    audience: e.API_AUDIENCE,
    jwksUrl: e.JWKS_URL ?? new URL('/.well-known/jwks.json', e.ISSUER).toString(),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    dataDir: e.DATA_DIR,
    logLevel: e.LOG_LEVEL,
    corsOrigins: Object.freeze(e.CORS_ORIGINS),
    trustProxy: e.TRUST_PROXY,
  });
}
