import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { DependencyUnavailableError } from './unavailable.js';

export interface LimiterSpec {
  keyPrefix: string;
  /** Failures allowed within `duration` seconds. */
  points: number;
  duration: number;
  /** Seconds a key stays blocked once over the limit (never permanent). */
  blockDuration?: number;
}

/** Counts failures; shared across instances through Redis when REDIS_URL is set. */
export interface FailureLimiter {
  /** Seconds to wait when the key is already over the limit, else 0. */
  retryAfter(key: string): Promise<number>;
  /** Records one failure; returns seconds to wait when this failure crossed the limit, else 0. */
  fail(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** A store failure is never "no limit": callers answer 503 (fail closed). */
async function orUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof RateLimiterRes) throw error;
    throw new DependencyUnavailableError('rate-limit store', error);
  }
}

export function createFailureLimiter(spec: LimiterSpec, redis?: Redis): FailureLimiter {
  const options = { ...spec, blockDuration: spec.blockDuration ?? spec.duration };
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({ ...options, storeClient: redis, useRedisPackage: false })
    : new RateLimiterMemory(options);
  return {
    async retryAfter(key) {
      const res = await orUnavailable(limiter.get(key));
      return res && res.consumedPoints >= spec.points ? seconds(res.msBeforeNext) : 0;
    },
    async fail(key) {
      try {
        await orUnavailable(limiter.consume(key));
        return 0;
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return seconds(rejection.msBeforeNext);
        throw rejection;
      }
    },
    async reset(key) {
      await orUnavailable(limiter.delete(key));
    },
  };
}
