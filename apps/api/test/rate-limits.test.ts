import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestAuthServer } from '@portcullis/testing/auth-server';
import { browser } from '@portcullis/testing';
import { pino } from 'pino';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../src/index.js';
import { clientIp } from '../src/middleware/client-ip.js';
import { createRateLimiters } from '../src/rate-limits.js';
import { makeUser } from './helpers/factories.js';
import { startTestApi, type Reply, type TestApi } from './helpers/harness.js';
import {
  login,
  PASSWORD,
  REDIS_URL,
  testLimiters,
  type TestLimiters,
} from './helpers/credentials.js';

// Small windows keep the waits short. TRUST_PROXY lets each test pick its client IP.
const ENV = {
  API_KEY_RATE_LIMIT: '3',
  API_KEY_RATE_WINDOW: '2',
  LOGIN_IP_LIMIT: '4',
  LOGIN_ACCOUNT_LIMIT: '3',
  LOGIN_LIMIT_WINDOW: '60',
  ANON_RATE_LIMIT: '1000',
  TRUST_PROXY: 'true',
};
const STORE = REDIS_URL ? 'redis' : 'memory';
const logger = pino({ level: 'silent' });

let api: TestApi;
let store: TestLimiters;
const cleanups: (() => Promise<void>)[] = [];
let ipCounter = 0;
const freshIp = () => `10.9.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;

beforeAll(async () => {
  store = await testLimiters(parseApiConfig(ENV).rateLimits);
  api = await startTestApi({ env: ENV, deps: { rateLimiters: store.limiters } });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await api.close();
  await store.close();
});

/** Another API instance on the same database, with its own limiters. */
async function secondInstance(
  env: Record<string, string>,
  limiters: TestLimiters,
): Promise<RunningApiServer> {
  const config = parseApiConfig({
    NODE_ENV: 'test',
    API_PORT: '0',
    ISSUER: api.config.issuer,
    API_AUDIENCE: api.config.audience,
    JWKS_URL: api.config.jwksUrl,
    ...env,
  });
  const server = await startApiServer(config, {
    db: api.database.db,
    logger,
    rateLimiters: limiters.limiters,
  });
  cleanups.push(() => server.close());
  return server;
}

async function newKey(body: Record<string, unknown> = {}): Promise<string> {
  const owner = await makeUser(api.database.db, ['admin']);
  const token = await api.tokenFor(owner);
  const reply = await api.request('POST', '/api-keys', {
    token,
    body: { name: 'k', permissions: ['users:read'], ...body },
  });
  expect(reply.status).toBe(201);
  return reply.body.key;
}

const get = (url: string, key: string) =>
  fetch(`${url}/users`, { headers: { authorization: `Bearer ${key}` } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectLimited(reply: Reply | Response, body: unknown, maxSeconds: number): number {
  expect(reply.status).toBe(429);
  expect(body).toEqual({ error: 'rate_limited', message: expect.any(String) });
  const retryAfter = reply.headers.get('retry-after')!;
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
  expect(Number(retryAfter)).toBeLessThanOrEqual(maxSeconds);
  return Number(retryAfter);
}

describe(`per JWT subject (${STORE} store)`, () => {
  test('a bearer caller past JWT_RATE_LIMIT gets 429; another caller is served', async () => {
    const env = { JWT_RATE_LIMIT: '3', JWT_RATE_WINDOW: '600' };
    const limiters = await testLimiters(parseApiConfig(env).rateLimits);
    cleanups.push(() => limiters.close());
    const server = await secondInstance(env, limiters);
    const token = await api.tokenFor(await makeUser(api.database.db, ['admin']));
    for (let i = 0; i < 3; i++) expect((await get(server.url, token)).status).toBe(200);
    const limited = await get(server.url, token);
    expectLimited(limited, await limited.json(), 600);
    const other = await api.tokenFor(await makeUser(api.database.db, ['admin']));
    expect((await get(server.url, other)).status).toBe(200);
  });
});

describe(`per API key (${STORE} store)`, () => {
  test('429 with Retry-After past the limit, another key unaffected, then 200 after waiting', async () => {
    const a = await newKey();
    const b = await newKey();
    for (let i = 0; i < 3; i++) expect((await get(api.url, a)).status).toBe(200);
    const limited = await get(api.url, a);
    const retryAfter = expectLimited(limited, await limited.json(), 2);
    expect((await get(api.url, b)).status).toBe(200);
    await sleep(retryAfter * 1000 + 100);
    expect((await get(api.url, a)).status).toBe(200);
  });

  test('a per-key limit overrides the default', async () => {
    const key = await newKey({ rateLimit: 1 });
    expect((await get(api.url, key)).status).toBe(200);
    expect((await get(api.url, key)).status).toBe(429);
  });

  test('20 parallel requests at limit 5: exactly 5 pass', async () => {
    const limiters = await testLimiters(parseApiConfig({ API_KEY_RATE_LIMIT: '5' }).rateLimits);
    cleanups.push(() => limiters.close());
    const server = await secondInstance(
      { API_KEY_RATE_LIMIT: '5', API_KEY_RATE_WINDOW: '60' },
      limiters,
    );
    const key = await newKey();
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () => get(server.url, key).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  (REDIS_URL ? test : test.skip)(
    `two API instances sharing Redis enforce one limit${REDIS_URL ? '' : ' (skipped: REDIS_URL not set)'}`,
    async () => {
      // Two instances, each with its own limiters and Redis connection, one key prefix:
      // what two processes behind a load balancer would have.
      const env = { API_KEY_RATE_LIMIT: '5', API_KEY_RATE_WINDOW: '60' };
      const settings = parseApiConfig(env).rateLimits;
      const one = await testLimiters(settings);
      const two = await testLimiters(settings, { prefix: one.prefix });
      cleanups.push(
        () => one.close(),
        () => two.close(),
      );
      const [s1, s2] = [await secondInstance(env, one), await secondInstance(env, two)];
      const key = await newKey();
      const statuses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          get(i % 2 ? s1.url : s2.url, key).then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    },
  );
});

describe(`failed logins (${STORE} store)`, () => {
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  test('per account: after 3 failures even the right password is 429, from any IP', async () => {
    const user = await makeUser(api.database.db);
    for (let i = 0; i < 3; i++)
      expect((await login(api, user.email, 'wrong', from(freshIp()))).status).toBe(401);
    const limited = await login(api, user.email.toUpperCase(), PASSWORD, from(freshIp()));
    expectLimited(limited, limited.body, 60);
    const other = await makeUser(api.database.db);
    expect((await login(api, other.email, PASSWORD, from(freshIp()))).status).toBe(200);
  });

  test('per IP: 4 failures across accounts, then 429 for that IP only (the left of X-Forwarded-For is ignored)', async () => {
    const ip = freshIp();
    for (let i = 0; i < 4; i++) {
      const user = await makeUser(api.database.db);
      expect((await login(api, user.email, 'wrong', from(`203.0.113.${i}, ${ip}`))).status).toBe(
        401,
      );
    }
    const user = await makeUser(api.database.db);
    const limited = await login(api, user.email, PASSWORD, from(`198.51.100.7, ${ip}`));
    expectLimited(limited, limited.body, 60);
    expect((await login(api, user.email, PASSWORD, from(freshIp()))).status).toBe(200);
  });

  test('a success resets the account counter and does not count against the IP', async () => {
    const user = await makeUser(api.database.db);
    const ip = freshIp();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++)
        expect((await login(api, user.email, 'wrong', from(freshIp()))).status).toBe(401);
      expect((await login(api, user.email, PASSWORD, from(ip))).status).toBe(200);
    }
    for (let i = 0; i < 5; i++)
      expect((await login(api, user.email, PASSWORD, from(ip))).status).toBe(200);
  });

  test('parallel guesses cannot slip past the account limit', async () => {
    const user = await makeUser(api.database.db);
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => login(api, user.email, 'wrong', from(freshIp()))),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
  });
});

describe('one sign-in limiter for both apps', () => {
  (REDIS_URL ? test : test.skip)(
    `failures at POST /login count at the auth server's sign-in page${REDIS_URL ? '' : ' (skipped: REDIS_URL not set)'}`,
    async () => {
      // One deployment: one REDIS_KEY_PREFIX, the same LOGIN_* for both apps.
      const prefix = `portcullis-test-${randomBytes(6).toString('hex')}:`;
      const limiters = await testLimiters(parseApiConfig(ENV).rateLimits, {
        prefix: `${prefix}rl:`,
      });
      cleanups.push(() => limiters.close());
      // The auth server owns the database here (its signing keys open with its DATA_DIR's
      // key); the API instance runs beside it, as in one deployment.
      const auth = await startTestAuthServer({
        ...ENV,
        REDIS_URL: REDIS_URL!,
        REDIS_KEY_PREFIX: prefix,
      });
      cleanups.push(() => auth.close());
      const server = await startApiServer(
        parseApiConfig({ NODE_ENV: 'test', API_PORT: '0', ISSUER: auth.issuer, ...ENV }),
        { db: auth.database.db, logger, rateLimiters: limiters.limiters },
      );
      cleanups.push(() => server.close());
      const user = { email: `shared-${randomBytes(4).toString('hex')}@example.com` };
      const created = await auth.admin('POST', '/admin/users', {
        ...user,
        password: PASSWORD,
        roles: ['viewer'],
        name: 'Shared',
      });
      expect(created.status).toBe(201);
      for (let i = 0; i < 3; i++) {
        const reply = await fetch(`${server.url}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: user.email, password: 'wrong' }),
        });
        expect(reply.status).toBe(401);
      }
      const clientId = `spa-${randomBytes(4).toString('hex')}`;
      const redirectUri = 'http://localhost:5173/callback';
      expect(
        (
          await auth.admin('POST', '/admin/clients', {
            client_id: clientId,
            token_endpoint_auth_method: 'none',
            redirect_uris: [redirectUri],
          })
        ).status,
      ).toBe(201);
      const authorize = new URL('/authorize', auth.issuer);
      authorize.search = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      const b = browser();
      const first = await b.get(authorize.href);
      const interaction = new URL(first.headers.get('location')!, auth.issuer).href;
      const csrf = /name="csrf" value="([^"]+)"/.exec(await (await b.get(interaction)).text())![1]!;
      const page = await b.postForm(`${interaction}/login`, {
        csrf,
        email: user.email,
        password: PASSWORD,
      });
      expect(page.status).toBe(429);
      expect(page.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    },
  );
});

describe('fail closed when the rate-limit store is down', () => {
  let down: RunningApiServer;
  let closeLimiters: () => Promise<void>;

  beforeAll(async () => {
    // Nothing listens on port 1: every limiter call fails, as with Redis down.
    const limiters = createRateLimiters({
      settings: parseApiConfig(ENV).rateLimits,
      redisUrl: 'redis://127.0.0.1:1',
      redisTimeoutMs: 200,
    });
    closeLimiters = () => limiters.close();
    cleanups.push(closeLimiters);
    down = await secondInstance(ENV, { limiters, prefix: '', close: closeLimiters });
  });

  test('API-key and JWT requests, logins and anonymous requests get 503 + Retry-After, never through', async () => {
    const key = await newKey();
    const user = await makeUser(api.database.db);
    const token = await api.tokenFor(user);
    const replies = [
      await get(down.url, key),
      // A JWT's per-subject limit cannot be counted either.
      await get(down.url, token),
      await fetch(`${down.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email, password: PASSWORD }),
      }),
      await fetch(`${down.url}/users`),
    ];
    for (const reply of replies) {
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      // 5xx bodies carry the code only (no message is exposed).
      expect(await reply.json()).toEqual({ error: 'temporarily_unavailable' });
      expect(reply.headers.getSetCookie()).toEqual([]);
    }
    // Health probes keep working.
    expect((await fetch(`${down.url}/healthz`)).status).toBe(200);
  });
});

describe('clientIp', () => {
  const ctx = (xff: string, remote = '::ffff:192.0.2.1') =>
    ({
      get: (name: string) => (name === 'X-Forwarded-For' ? xff : ''),
      req: { socket: { remoteAddress: remote } },
    }) as never;

  test('the socket address unless TRUST_PROXY; then the right-most X-Forwarded-For hop', () => {
    expect(clientIp(ctx('198.51.100.1'), false)).toBe('192.0.2.1');
    expect(clientIp(ctx('198.51.100.1, 203.0.113.9'), true)).toBe('203.0.113.9');
    expect(clientIp(ctx('2001:db8::1'), true)).toBe('2001:db8::1');
    expect(clientIp(ctx('not-an-ip'), true)).toBe('192.0.2.1');
    expect(clientIp(ctx(''), true)).toBe('192.0.2.1');
  });
});
