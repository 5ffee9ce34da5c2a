import { createSignInLimiter, waitForRedis, type Attempt } from '@portcullis/accounts';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { ApiConfig, RateLimitSetting } from './config.js';
import { RateLimitedError, ServiceUnavailableError } from './errors.js';
import { createRedisClient } from './redis.js';

export type LimiterName = 'apiKey' | 'jwt' | 'anonymous';

/** Fixed-window counters, Redis with REDIS_URL (docs/security.md#rate-limits-fail-closed). */
export interface RateLimiters {
  readonly store: 'memory' | 'redis';
  /** Counts one request for `key`; throws RateLimitedError past `limit`. Atomic in either store. */
  consume(name: LimiterName, key: string, limit?: number | null): Promise<void>;
  /** Counts one password attempt per IP and per account (packages/accounts' sign-in limiter). */
  beginLogin(ip: string, email: string): Promise<Attempt<'ip' | 'account'>>;
  ready(): Promise<void>;
  /** One round trip to the store (Redis PING; in process: nothing), for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface RateLimitersOptions {
  settings: ApiConfig['rateLimits'];
  redisUrl?: string | undefined;
  keyPrefix?: string;
  /** Milliseconds before a Redis connect attempt or command gives up. Default 1000. */
  redisTimeoutMs?: number;
  onStoreError?: (error: unknown) => void;
}

// The stored limiter never rejects: each call compares with its own limit (per-key overrides).
const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const NAMES: readonly LimiterName[] = ['apiKey', 'jwt', 'anonymous'];

export function createRateLimiters(options: RateLimitersOptions): RateLimiters {
  const prefix = options.keyPrefix ?? 'portcullis:rl:';
  const timeoutMs = options.redisTimeoutMs ?? 1000;
  const onStoreError = options.onStoreError ?? (() => undefined);
  const client = options.redisUrl
    ? createRedisClient(options.redisUrl, timeoutMs, onStoreError)
    : undefined;

  const build = (name: LimiterName, setting: RateLimitSetting): RateLimiterAbstract => {
    const common = {
      keyPrefix: `${prefix}${name}`,
      points: UNBOUNDED,
      duration: setting.durationSec,
    };
    return client
      ? new RateLimiterRedis({ ...common, storeClient: client, rejectIfRedisNotReady: true })
      : new RateLimiterMemory(common);
  };
  const limiters = Object.fromEntries(
    NAMES.map((n) => [n, build(n, options.settings[n])]),
  ) as Record<LimiterName, RateLimiterAbstract>;

  const unavailable = (error: unknown) => {
    onStoreError(error);
    return new ServiceUnavailableError('rate limits cannot be checked right now', 5, error);
  };
  const signIn = createSignInLimiter(options.settings.signIn, {
    redis: client,
    keyPrefix: `${prefix}signin:`,
    unavailable,
  });

  return {
    store: client ? 'redis' : 'memory',

    async consume(name, key, limit) {
      let res: RateLimiterRes;
      try {
        res = await limiters[name].consume(key, 1);
      } catch (error) {
        throw error instanceof RateLimiterRes
          ? new RateLimitedError(error.msBeforeNext / 1000)
          : unavailable(error);
      }
      if (res.consumedPoints > (limit ?? options.settings[name].points)) {
        throw new RateLimitedError(res.msBeforeNext / 1000);
      }
    },

    beginLogin: (ip, email) => signIn.begin(ip, email),

    ready: () => (client ? waitForRedis(client, timeoutMs * 5) : Promise.resolve()),

    async ping() {
      await client?.ping();
    },

    async close() {
      if (!client) return;
      // quit() flushes politely but only on a live link; otherwise stop reconnecting now.
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

/** The limiters the config describes; Redis when REDIS_URL is set. */
export function rateLimitersFromConfig(
  config: ApiConfig,
  options: Omit<RateLimitersOptions, 'settings' | 'redisUrl'> = {},
): RateLimiters {
  return createRateLimiters({
    keyPrefix: `${config.redisKeyPrefix}rl:`,
    ...options,
    settings: config.rateLimits,
    redisUrl: config.redisUrl,
  });
}
