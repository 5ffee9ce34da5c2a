/**
 * The auth server on PostgreSQL that stops answering without closing anything (its
 * processes stopped, or a network partition), played by a TCP proxy this test owns that
 * holds every byte until it thaws. Every database round trip is bounded (DB_QUERY_TIMEOUT,
 * README "Database faults"): /token answers 503 + Retry-After within a few seconds, and a
 * refresh the server gave up on is not half done: the client retries the same refresh
 * token after the outage and goes on, without a reuse alert. The reuse interval is off
 * here (REFRESH_REUSE_INTERVAL=0), so that a retry succeeds only when nothing of the
 * failed rotation was committed (docs/security.md).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDb, type Db } from '@portcullis/db';
import {
  createProxiedTestDatabase,
  type ProxiedTestDatabase,
  type TcpProxy,
} from '@portcullis/db/testing';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  TEST_API_AUDIENCE,
  type JsonBody,
} from '@portcullis/testing';
import { pino } from 'pino';
import { parseAuthConfig, type RunningAuthServer } from '../src/index.js';

/** Well under a client's 15 s timeout. */
const CLIENT_PATIENCE_MS = 10_000;
const withPostgres = process.env['DATABASE_URL'] ? describe : describe.skip;
if (!process.env['DATABASE_URL']) {
  console.info('database-freeze.test.ts skipped: it needs a PostgreSQL server (DATABASE_URL)');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

withPostgres('auth server on PostgreSQL that stops answering (runs only with DATABASE_URL)', () => {
  let database: ProxiedTestDatabase;
  let proxy: TcpProxy;
  let db: Db;
  let t: TestAuthServer;
  let server: RunningAuthServer;

  beforeAll(async () => {
    database = await createProxiedTestDatabase();
    proxy = database.proxy;
    const env = {
      DATABASE_URL: database.proxiedUrl,
      DB_QUERY_TIMEOUT: '1',
      REFRESH_REUSE_INTERVAL: '0',
    };
    // The database handle as main.ts builds it from the configuration.
    const config = parseAuthConfig({ NODE_ENV: 'test', ...env });
    db = createDb({ databaseUrl: config.databaseUrl, queryTimeoutMs: config.dbQueryTimeoutMs });
    t = await startTestAuthServer(env, {
      db,
      logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    });
    server = t.server;
  }, 60_000);

  afterAll(async () => {
    proxy?.thaw();
    await t?.close();
    await db?.destroy();
    await database?.close();
  });

  async function admin(method: string, route: string, body?: unknown): Promise<JsonBody> {
    const res = await t.admin(method, route, body);
    if (res.status >= 300) {
      throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body;
  }

  async function token(form: Record<string, string>) {
    const started = Date.now();
    const res = await fetch(`${server.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as JsonBody,
      ms: Date.now() - started,
    };
  }

  /** A signed-in public client's refresh token and grant. */
  async function refreshChain() {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const tokens = await pkceSignIn(config, user, {
      scope: 'openid offline_access api',
      resource: TEST_API_AUDIENCE,
    });
    return {
      clientId: spa.client_id,
      refreshToken: tokens.refresh_token!,
      grantId: decodeJwt(tokens.access_token).payload.grant_id as string,
    };
  }

  const refresh = (chain: { clientId: string; refreshToken: string }) =>
    token({
      grant_type: 'refresh_token',
      client_id: chain.clientId,
      refresh_token: chain.refreshToken,
    });

  /** After thaw: the server answers again and PostgreSQL has aborted what was held. */
  async function recovered(): Promise<void> {
    let ready = 0;
    for (let i = 0; i < 50 && ready !== 200; i++) {
      ready = (await fetch(`${server.url}/readyz`)).status;
      if (ready !== 200) await sleep(200);
    }
    expect(ready).toBe(200);
    for (let i = 0; i < 50 && (await database.openTransactions()) > 0; i++) await sleep(100);
    expect(await database.openTransactions()).toBe(0);
  }

  const reuseAlerts = async (grantId: string) =>
    (
      (await admin('GET', '/admin/audit?kind=refresh_token_reuse&limit=100'))['items'] as {
        grantId: string;
      }[]
    ).filter((e) => e.grantId === grantId).length;

  /** The client's retry of the old token rotates, its successor rotates too, and no alert. */
  async function expectChainGoesOn(chain: Awaited<ReturnType<typeof refreshChain>>) {
    const retried = await refresh(chain);
    expect(retried.status).toBe(200);
    expect((await refresh({ ...chain, refreshToken: retried.body['refresh_token'] })).status).toBe(
      200,
    );
    expect(await reuseAlerts(chain.grantId)).toBe(0);
  }

  function expect503(answer: Awaited<ReturnType<typeof token>>) {
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toMatch(/^[1-9]\d*$/);
    expect(answer.body['error']).toBe('temporarily_unavailable');
    expect(answer.ms).toBeLessThan(CLIENT_PATIENCE_MS);
  }

  it('/token (client credentials and refresh) answers 503 with Retry-After within a few seconds; the refresh is retried after the thaw', async () => {
    const service = await admin('POST', '/admin/clients', {
      client_id: `svc-${randomUUID().slice(0, 8)}`,
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const clientCredentials = () =>
      token({
        grant_type: 'client_credentials',
        client_id: service['client_id'],
        client_secret: service['client_secret'],
        resource: TEST_API_AUDIENCE,
      });
    const chain = await refreshChain();
    expect((await clientCredentials()).status).toBe(200);

    proxy.freeze();
    const [refreshes, issued] = await Promise.all([
      Promise.all([refresh(chain), refresh(chain)]),
      Promise.all(Array.from({ length: 4 }, () => clientCredentials())),
    ]).finally(() => proxy.thaw());
    for (const answer of refreshes) expect503(answer);
    // A client credentials grant may need no round trip (its client cached, its token a
    // JWT): served, or refused like the refresh, never left waiting.
    for (const answer of issued) {
      if (answer.status !== 200) expect503(answer);
      expect(answer.ms).toBeLessThan(CLIENT_PATIENCE_MS);
    }

    await recovered();
    expect((await clientCredentials()).status).toBe(200);
    await expectChainGoesOn(chain);
  }, 60_000);

  // A rotation is two round trips (consume the old token, then save its successor). A
  // freeze between them leaves the old token consumed with no successor: nobody holds one,
  // so the client's retry after its 503 rotates again instead of counting as reuse.
  it('a rotation abandoned after PostgreSQL consumed the old token: the retry after the thaw goes on', async () => {
    const chain = await refreshChain();
    // The consume reaches the server and is done there; its answer never comes back. Its
    // answer names the token, without a payload (the read's answer before it has one).
    proxy.freezeOnReply(
      (chunk) => chunk.includes(chain.refreshToken) && !chunk.includes('accountId'),
    );
    const failed = await refresh(chain).finally(() => proxy.thaw());
    expect503(failed);
    await recovered();
    await expectChainGoesOn(chain);
  }, 60_000);

  // The successor's save is one statement outside a transaction: held in the network, it
  // would be committed when the network heals, long after the client's 503, and the
  // client's retry of the old token would then count as reuse.
  it('a successor whose save was held in the network until after the 503 is not saved at the thaw: the retry goes on', async () => {
    const chain = await refreshChain();
    // The save of the successor: the one message naming the old token with a payload.
    proxy.freezeOnRequest(
      (chunk) => chunk.includes(chain.refreshToken) && chunk.includes('accountId'),
    );
    const failed = await refresh(chain);
    expect503(failed);
    proxy.thaw();
    await recovered();
    await expectChainGoesOn(chain);
  }, 60_000);

  /** Sessions PostgreSQL holds on the test database, asked straight, not through the proxy. */
  const sessions = async () =>
    (
      (await database.db.raw(
        'select pid from pg_stat_activity where datname = current_database()',
      )) as { rows: { pid: number }[] }
    ).rows.map((r) => r.pid);

  // The consume is one statement outside a transaction too: held in the network, it would
  // consume the token at the thaw, after the client's 503, and its retry would be reuse.
  it('a consume held in the network until after the 503 is not applied at the thaw: the old token is untouched', async () => {
    const chain = await refreshChain();
    let naming = 0;
    // The second message naming the token is its consume (the first is its read).
    proxy.freezeOnRequest((chunk) => chunk.includes(chain.refreshToken) && ++naming === 2);
    const failed = await refresh(chain);
    expect503(failed);
    const frozen = await sessions();
    proxy.thaw();
    // The held consume is delivered, then its connection's close: that session ends.
    let alive = frozen.length;
    for (let i = 0; i < 50 && alive === frozen.length; i++) {
      const now = new Set(await sessions());
      alive = frozen.filter((pid) => now.has(pid)).length;
      if (alive === frozen.length) await sleep(100);
    }
    expect(alive).toBeLessThan(frozen.length);
    await recovered();
    const row = (await database
      .db('oidc_payloads')
      .where({ type: 'RefreshToken', id: chain.refreshToken })
      .first('consumed_at')) as { consumed_at: Date | null };
    expect(row.consumed_at).toBeNull();
    await expectChainGoesOn(chain);
  }, 60_000);
});
