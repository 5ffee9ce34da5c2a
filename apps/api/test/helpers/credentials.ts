import { randomBytes } from 'node:crypto';
import { deleteRedisKeys } from '@portcullis/testing';
import type { ApiConfig } from '../../src/config.js';
import { createRateLimiters, type RateLimiters } from '../../src/rate-limits.js';
import { PASSWORD } from './factories.js';
import { API_AUDIENCE, type Reply, type TestApi } from './harness.js';

/** What the factories give every user. */
export { PASSWORD };
/** The API's own origin in tests: the origin of API_AUDIENCE. */
export const ORIGIN = new URL(API_AUDIENCE).origin;
export const REDIS_URL = process.env['REDIS_URL'];

/** The `sid` value a reply sets, or undefined. */
export function sidOf(reply: Reply): string | undefined {
  const cookie = reply.headers.getSetCookie().find((c) => c.startsWith('sid='));
  return cookie?.slice(4, cookie.indexOf(';'));
}

export function setCookieOf(reply: Reply): string | undefined {
  return reply.headers.getSetCookie().find((c) => c.startsWith('sid='));
}

export async function login(
  api: TestApi,
  email: string,
  password = PASSWORD,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return api.request('POST', '/login', { body: { email, password }, headers });
}

/** Headers of a browser request carrying the session, from our own origin. */
export const withSession = (sid: string, extra: Record<string, string> = {}) => ({
  cookie: `sid=${sid}`,
  origin: ORIGIN,
  ...extra,
});

export interface TestLimiters {
  limiters: RateLimiters;
  prefix: string;
  /** Closes the client and, with Redis, deletes every key of this run (SCAN + DEL). */
  close(): Promise<void>;
}

/**
 * Limiters for one test run: Redis under a random key prefix when REDIS_URL is set
 * (so parallel runs never share counters), in-process otherwise.
 */
export async function testLimiters(
  settings: ApiConfig['rateLimits'],
  options: { prefix?: string; redisUrl?: string | undefined } = {},
): Promise<TestLimiters> {
  const redisUrl = 'redisUrl' in options ? options.redisUrl : REDIS_URL;
  const prefix = options.prefix ?? `portcullis-test-${randomBytes(6).toString('hex')}:`;
  const limiters = createRateLimiters({ settings, redisUrl, keyPrefix: prefix });
  await limiters.ready();
  return {
    limiters,
    prefix,
    async close() {
      await limiters.close();
      if (redisUrl) await deleteRedisKeys(redisUrl, prefix);
    },
  };
}
