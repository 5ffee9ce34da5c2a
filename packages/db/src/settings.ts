import { z } from 'zod';

/** DB_QUERY_TIMEOUT's default, also createDb's when it is given none (tests, benchmarks). */
export const DEFAULT_QUERY_TIMEOUT_MS = 5_000;

/**
 * DB_QUERY_TIMEOUT and DB_START_TIMEOUT (seconds), parsed by each app's config.ts with
 * these rules so both apps read them alike. README "Configuration" documents them.
 */
export const databaseVariables = {
  /** Longest wait for one database round trip before the request answers 503. */
  DB_QUERY_TIMEOUT: z.coerce
    .number()
    .min(0.1)
    .max(3600)
    .default(DEFAULT_QUERY_TIMEOUT_MS / 1000),
  /** How long startup waits for an unreachable PostgreSQL; 0 gives up at the first refusal. */
  DB_START_TIMEOUT: z.coerce.number().min(0).max(86_400).default(60),
};
