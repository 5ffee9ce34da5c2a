import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  createAttemptLimiter,
  createSignInLimiter,
  LimiterUnavailableError,
  type AttemptStore,
} from '@portcullis/accounts';

// Real stores: in process, and Redis when REDIS_URL is set (under a key prefix of this run).
const REDIS_URL = process.env['REDIS_URL'];
const STORE = REDIS_URL ? 'redis' : 'memory';
const PREFIX = `portcullis-test-${randomBytes(6).toString('hex')}:`;
let redis: Redis | undefined;
let n = 0;
const store = (): AttemptStore => ({ redis, keyPrefix: `${PREFIX}${++n}:` });

beforeAll(() => {
  if (REDIS_URL) redis = new Redis(REDIS_URL, { enableOfflineQueue: false });
  return redis && new Promise((resolve) => redis!.once('ready', resolve));
});
afterAll(async () => {
  if (!redis) return;
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe(`attempt limiter (${STORE} store)`, () => {
  const rules = {
    pair: { points: 3, durationSec: 60, onSuccess: 'reset' },
    client: { points: 5, durationSec: 60, onSuccess: 'reward' },
  } as const;

  test('past a key’s limit the attempt is refused with Retry-After, naming the key', async () => {
    const limiter = createAttemptLimiter(rules, store());
    for (let i = 0; i < 3; i++) {
      const attempt = await limiter.begin({ pair: 'c1|a', client: 'c1' });
      expect(attempt.retryAfter).toBe(0);
    }
    const refused = await limiter.begin({ pair: 'c1|a', client: 'c1' });
    expect(refused.limitedBy).toBe('pair');
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.retryAfter).toBeLessThanOrEqual(60);
    // Another address for the same client is not refused.
    expect((await limiter.begin({ pair: 'c1|b', client: 'c1' })).retryAfter).toBe(0);
  });

  test('an attempt refused under an earlier key is not counted under later ones', async () => {
    const limiter = createAttemptLimiter(rules, store());
    for (let i = 0; i < 50; i++) await limiter.begin({ pair: 'c1|a', client: 'c1' });
    // 3 of the 50 reached the client's count: 2 more addresses may still try.
    expect((await limiter.begin({ pair: 'c1|b', client: 'c1' })).retryAfter).toBe(0);
    expect((await limiter.begin({ pair: 'c1|c', client: 'c1' })).retryAfter).toBe(0);
    const refused = await limiter.begin({ pair: 'c1|d', client: 'c1' });
    expect(refused.limitedBy).toBe('client');
  });

  test('a success resets a reset key and takes its own attempt back from a reward key', async () => {
    const limiter = createAttemptLimiter(rules, store());
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 3; i++) {
        const attempt = await limiter.begin({ pair: 'c1|a', client: 'c1' });
        expect(attempt.retryAfter).toBe(0);
        if (i === 2) await attempt.succeeded();
      }
    }
    // Two failures per round stay on the client (4 of 5); the pair was cleared each time.
    expect((await limiter.begin({ pair: 'c1|a', client: 'c1' })).retryAfter).toBe(0);
    const refused = await limiter.begin({ pair: 'c1|b', client: 'c1' });
    expect(refused.limitedBy).toBe('client');
  });

  test('parallel attempts cannot slip past the limit', async () => {
    const limiter = createAttemptLimiter(rules, store());
    const attempts = await Promise.all(
      Array.from({ length: 20 }, () => limiter.begin({ pair: 'c1|a', client: 'c1' })),
    );
    expect(attempts.filter((a) => a.retryAfter === 0)).toHaveLength(3);
  });

  test('check counts only failures, in order, and a success clears a reset key', async () => {
    const limiter = createAttemptLimiter(rules, store());
    const keys = { pair: 'c1|a', client: 'c1' };
    for (let i = 0; i < 10; i++) await (await limiter.check(keys)).succeeded();
    for (let i = 0; i < 2; i++) await (await limiter.check(keys)).failed();
    await (await limiter.check(keys)).succeeded();
    for (let i = 0; i < 3; i++) {
      const attempt = await limiter.check(keys);
      expect(attempt.retryAfter).toBe(0);
      await attempt.failed();
    }
    const refused = await limiter.check(keys);
    expect(refused.limitedBy).toBe('pair');
    expect(refused.retryAfter).toBeGreaterThan(0);
    // 5 failures reached the client (2 before the success, 3 after): it is at its limit.
    expect((await limiter.check({ pair: 'c1|b', client: 'c1' })).limitedBy).toBe('client');
  });

  test('sign-in limiter: the account is one key for any case or spacing of the email', async () => {
    const limiter = createSignInLimiter({ ipLimit: 100, accountLimit: 2, windowSec: 30 }, store());
    await limiter.begin('192.0.2.1', 'Ann@Example.com');
    await limiter.begin('192.0.2.2', ' ann@example.com ');
    const refused = await limiter.begin('192.0.2.3', 'ANN@EXAMPLE.COM');
    expect(refused.limitedBy).toBe('account');
    expect(refused.retryAfter).toBeLessThanOrEqual(30);
  });

  test('sign-in limiter: an IPv4 address counts as one whether or not Node maps it to IPv6', async () => {
    const limiter = createSignInLimiter({ ipLimit: 2, accountLimit: 100, windowSec: 30 }, store());
    await limiter.begin('::ffff:192.0.2.9', 'a@example.com');
    await limiter.begin('192.0.2.9', 'b@example.com');
    expect((await limiter.begin('::FFFF:192.0.2.9', 'c@example.com')).limitedBy).toBe('ip');
    expect((await limiter.begin('2001:db8::9', 'd@example.com')).retryAfter).toBe(0);
  });

  test('a store that cannot answer fails closed', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    try {
      const limiter = createAttemptLimiter(rules, { redis: down, keyPrefix: PREFIX });
      await expect(limiter.begin({ pair: 'x', client: 'y' })).rejects.toBeInstanceOf(
        LimiterUnavailableError,
      );
    } finally {
      down.disconnect();
    }
  });
});
