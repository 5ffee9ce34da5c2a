import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { z } from 'zod';

/** At most `points` failed attempts under one key per fixed window of `durationSec`. */
export interface AttemptRule {
  points: number;
  durationSec: number;
  /** `reward` takes back its own attempt (a shared key such as an IP); `reset` forgets every failure. */
  onSuccess: 'reward' | 'reset';
}

export interface AttemptStore {
  /** Shared by every instance when set; in process otherwise. */
  redis?: Redis | undefined;
  /** Namespace of the keys, e.g. `${REDIS_KEY_PREFIX}signin:`. */
  keyPrefix: string;
  /** The error to throw when the store cannot answer (fail closed); default LimiterUnavailableError. */
  unavailable?: (cause: unknown) => Error;
}

/** One attempt, counted before the secret was checked. */
export interface Attempt<K extends string = string> {
  /** Seconds to wait when a key is over its limit: refuse the attempt (429). Else 0. */
  readonly retryAfter: number;
  /** The key that refused it (for metrics and logs), when refused. */
  readonly limitedBy: K | undefined;
  /** The secret was right: each key's `onSuccess` applies. */
  succeeded(): Promise<void>;
}

export interface AttemptLimiter<K extends string> {
  // Counted before the check, so parallel guesses cannot slip in between, and stops at the first
  // key over its limit, so one address cannot run up the keys others share. Atomic in either store.
  begin(keys: Record<K, string>): Promise<Attempt<K>>;
  /** Checks only and counts on `failed()`, for an honest holder's bursts; parallel guesses can pass together. */
  check(keys: Record<K, string>): Promise<CheckedAttempt<K>>;
}

/** An attempt that was checked, not counted: the caller reports how it ended. */
export interface CheckedAttempt<K extends string = string> extends Attempt<K> {
  /** The secret was wrong: counts one failure. */
  failed(): Promise<void>;
}

/** A rate-limit store failure: never "no limit" (README "Operating it": fail closed). */
export class LimiterUnavailableError extends Error {
  override name = 'LimiterUnavailableError';
  constructor(cause: unknown) {
    super('rate-limit store unavailable', { cause });
  }
}

// Unbounded: begin compares the count itself, so a refused attempt still gets its window back.
const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Failed attempts at a secret limited under several keys at once (rate-limiter-flexible windows). */
export function createAttemptLimiter<K extends string>(
  rules: Readonly<Record<K, AttemptRule>>,
  store: AttemptStore,
): AttemptLimiter<K> {
  const unavailable = store.unavailable ?? ((cause) => new LimiterUnavailableError(cause));
  const names = Object.keys(rules) as K[];
  const limiters = new Map<K, RateLimiterAbstract>(
    names.map((name) => {
      const options = {
        keyPrefix: `${store.keyPrefix}${name}`,
        points: UNBOUNDED,
        duration: rules[name].durationSec,
      };
      const limiter = store.redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: store.redis,
            useRedisPackage: false,
            rejectIfRedisNotReady: true,
          })
        : new RateLimiterMemory(options);
      return [name, limiter];
    }),
  );
  const call = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      // Only a store failure lands here: the stored limit is unbounded.
      throw error instanceof RateLimiterRes ? error : unavailable(error);
    }
  };

  return {
    async check(keys) {
      const counts = await Promise.all(
        names.map((name) => call(() => limiters.get(name)!.get(keys[name]))),
      );
      const over = names.findIndex(
        (name, i) => (counts[i]?.consumedPoints ?? 0) >= rules[name].points,
      );
      if (over >= 0) {
        return {
          retryAfter: seconds(counts[over]!.msBeforeNext),
          limitedBy: names[over],
          succeeded: () => Promise.resolve(),
          failed: () => Promise.resolve(),
        };
      }
      return {
        retryAfter: 0,
        limitedBy: undefined,
        async failed() {
          for (const name of names) {
            const limiter = limiters.get(name)!;
            const res = await call(() => limiter.consume(keys[name], 1));
            if (res.consumedPoints > rules[name].points) return;
          }
        },
        // Successes were not counted: only failures a `reset` key holds are forgotten.
        async succeeded() {
          await Promise.all(
            names.map((name, i) =>
              rules[name].onSuccess === 'reset' && (counts[i]?.consumedPoints ?? 0) > 0
                ? call(() => limiters.get(name)!.delete(keys[name]))
                : undefined,
            ),
          );
        },
      };
    },

    async begin(keys) {
      const counted: K[] = [];
      for (const name of names) {
        const limiter = limiters.get(name)!;
        const res = await call(() => limiter.consume(keys[name], 1));
        counted.push(name);
        if (res.consumedPoints > rules[name].points) {
          return {
            retryAfter: seconds(res.msBeforeNext),
            limitedBy: name,
            succeeded: () => Promise.resolve(),
          };
        }
      }
      return {
        retryAfter: 0,
        limitedBy: undefined,
        async succeeded() {
          await Promise.all(
            counted.map((name) => {
              const limiter = limiters.get(name)!;
              return call<unknown>(() =>
                rules[name].onSuccess === 'reset'
                  ? limiter.delete(keys[name])
                  : limiter.reward(keys[name], 1),
              );
            }),
          );
        },
      };
    },
  };
}

/** Failed sign-ins per client IP and per account, within one window (LOGIN_*). */
export interface SignInLimits {
  ipLimit: number;
  accountLimit: number;
  windowSec: number;
}

const count = z.coerce.number().int().min(1).max(1_000_000);

/** Parsed by every app that checks a password, so all apply one limit (README "Configuration"). */
export const signInLimitVariables = {
  LOGIN_IP_LIMIT: count.default(20),
  LOGIN_ACCOUNT_LIMIT: count.default(5),
  LOGIN_LIMIT_WINDOW: z.coerce
    .number()
    .int()
    .min(1)
    .max(365 * 86_400)
    .default(900),
};

export function signInLimitsOf(env: {
  LOGIN_IP_LIMIT: number;
  LOGIN_ACCOUNT_LIMIT: number;
  LOGIN_LIMIT_WINDOW: number;
}): SignInLimits {
  return Object.freeze({
    ipLimit: env.LOGIN_IP_LIMIT,
    accountLimit: env.LOGIN_ACCOUNT_LIMIT,
    windowSec: env.LOGIN_LIMIT_WINDOW,
  });
}

export interface SignInLimiter {
  /** Counts one attempt for the address and the account; see Attempt. */
  begin(ip: string, email: string): Promise<Attempt<'ip' | 'account'>>;
}

// No permanent lockout: the account key expires with its window. The key hashes the email so Redis
// holds no addresses; every door to the password shares one `keyPrefix`, so they share one count.
export function createSignInLimiter(limits: SignInLimits, store: AttemptStore): SignInLimiter {
  const limiter = createAttemptLimiter(
    {
      ip: { points: limits.ipLimit, durationSec: limits.windowSec, onSuccess: 'reward' },
      account: { points: limits.accountLimit, durationSec: limits.windowSec, onSuccess: 'reset' },
    },
    store,
  );
  return {
    begin: (ip, email) => limiter.begin({ ip: plainIp(ip), account: accountKey(email) }),
  };
}

/** An IPv4 address as Node may show it on a dual-stack socket (::ffff:192.0.2.1): one key for both doors. */
function plainIp(ip: string): string {
  return ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
}

function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** Resolves once `client` is connected (commands fail at once before that: no offline queue). */
export function waitForRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onFail);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onFail = (error: Error) => done(error);
    const timer = setTimeout(() => done(new Error('redis not ready')), timeoutMs);
    client.once('ready', onReady);
    client.once('error', onFail);
  });
}
