import { z } from 'zod';

/** DB_QUERY_TIMEOUT's default, also createDb's when it is given none (tests, benchmarks). */
export const DEFAULT_QUERY_TIMEOUT_MS = 5_000;

// Parsed by each app's config.ts so both read them alike (README "Configuration").
export const databaseVariables = {
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DB_QUERY_TIMEOUT: z.coerce
    .number()
    .min(0.1)
    .max(3600)
    .default(DEFAULT_QUERY_TIMEOUT_MS / 1000),
  /** How long startup waits for an unreachable PostgreSQL; 0 gives up at the first refusal. */
  DB_START_TIMEOUT: z.coerce.number().min(0).max(86_400).default(60),
};

export type DatabaseSettings = Readonly<{
  databaseUrl: string | undefined;
  dbQueryTimeoutMs: number;
  dbStartTimeoutMs: number;
}>;

export function databaseSettingsOf(e: {
  DATABASE_URL?: string | undefined;
  DB_QUERY_TIMEOUT: number;
  DB_START_TIMEOUT: number;
}): DatabaseSettings {
  return {
    databaseUrl: e.DATABASE_URL,
    dbQueryTimeoutMs: e.DB_QUERY_TIMEOUT * 1000,
    dbStartTimeoutMs: e.DB_START_TIMEOUT * 1000,
  };
}

// Parsed alike by each app's config.ts (README "Configuration").
export const redisVariables = {
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_.-]{1,64}$/, 'must be 1..64 characters of A-Z a-z 0-9 : _ . -')
    .default('portcullis:'),
};

export type RedisSettings = Readonly<{ redisUrl: string | undefined; redisKeyPrefix: string }>;

export function redisSettingsOf(e: {
  REDIS_URL?: string | undefined;
  REDIS_KEY_PREFIX: string;
}): RedisSettings {
  return { redisUrl: e.REDIS_URL, redisKeyPrefix: e.REDIS_KEY_PREFIX };
}
