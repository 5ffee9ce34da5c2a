/**
 * Two auth-server processes behind one issuer, on one PostgreSQL database and one Redis:
 * nothing that decides a redemption may live in one process's memory, so
 *   - 100 concurrent redemptions of one code spread over both: exactly one succeeds;
 *   - a refresh token rotated through one and replayed through the other is reuse;
 *   - one instance killed in a refresh storm: every client retries on the other and no
 *     refresh chain is lost, no reuse alert raised (docs/security.md, reuse interval).
 * A small HTTP front stands for the load balancer at the issuer URL. PGlite is one
 * process's database, so this runs only with DATABASE_URL and REDIS_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import * as oidc from 'openid-client';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { spawnScript } from './helpers/processes.js';
import {
  browserLogin,
  decodeJwt,
  pkceSignIn,
  PUBLIC_SPA_METADATA,
  REDIRECT_URI,
} from '../../apps/auth-server/test/helpers/factories.js';

const shared = Boolean(process.env['DATABASE_URL'] && process.env['REDIS_URL']);
// Skipped (and reported as skipped) on the embedded database.
const describeShared = shared ? describe : describe.skip;
const AUDIENCE = 'http://api.portcullis.test';
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const REDIS_KEY_PREFIX = `portcullis-test-${randomBytes(6).toString('hex')}:`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Instance {
  url: string;
  adminUrl: string;
  child: ChildProcess;
  output: () => string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createTcpServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitReady(instance: Instance) {
  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline) {
    if (instance.child.exitCode !== null) throw new Error(`exited early:\n${instance.output()}`);
    const ok = await fetch(`${instance.url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready in time:\n${instance.output()}`);
}

function stop(instance: Instance, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null)
    return Promise.resolve();
  return new Promise((resolve) => {
    instance.child.once('exit', () => resolve());
    instance.child.kill(signal);
  });
}

let database: TestDatabase;
let dataDir: string;
let a: Instance;
let b: Instance;
let front: Server;
let issuer: string;
// The front sends each request to the next live instance in turn.
let turn = 0;
const live = () => [a, b].filter((i) => i.child.exitCode === null && i.child.signalCode === null);

async function admin(method: string, route: string, body?: unknown): Promise<Json> {
  const res = await fetch(live()[0]!.adminUrl + route, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

function startFront(port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const targets = live();
    const target = new URL(targets[turn++ % targets.length]!.url);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

async function signedIn() {
  const email = `auth-scale-${randomUUID().slice(0, 8)}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  await admin('POST', '/admin/users', { email, password, roles: ['editor'] });
  const spa = await admin('POST', '/admin/clients', {
    client_id: `spa-${randomUUID().slice(0, 8)}`,
    ...PUBLIC_SPA_METADATA,
  });
  const config = await oidc.discovery(new URL(issuer), spa.client_id, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  return { config, clientId: spa.client_id as string, user: { email, password } };
}

/** One /token request straight to one instance; a dead instance answers `null`. */
async function token(instance: Instance, form: Record<string, string>) {
  try {
    const res = await fetch(`${instance.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, body: (await res.json()) as Json };
  } catch {
    return null;
  }
}

const reuseAudits = async (grantIds: Set<unknown>) => {
  const audit = await admin('GET', '/admin/audit?kind=refresh_token_reuse&limit=100');
  return (audit.items as { grantId: string }[]).filter((e) => grantIds.has(e.grantId)).length;
};

beforeAll(async () => {
  if (!shared) return;
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-auth-scale-'));
  const ports = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()));
  const [frontPort, portA, adminA, portB, adminB] = ports as [
    number,
    number,
    number,
    number,
    number,
  ];
  issuer = `http://127.0.0.1:${frontPort}`;
  const common = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.url!,
    REDIS_URL: process.env['REDIS_URL']!,
    REDIS_KEY_PREFIX,
    ISSUER: issuer,
    API_AUDIENCE: AUDIENCE,
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    // One issuer: both instances sign cookies and decrypt signing keys alike.
    COOKIE_KEYS: randomBytes(32).toString('base64url'),
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
  };
  const spawnInstance = async (port: number, adminPort: number, name: string) => {
    const spawned = await spawnScript('apps/auth-server/src/main.ts', {
      ...common,
      AUTH_PORT: String(port),
      ADMIN_PORT: String(adminPort),
      DATA_DIR: path.join(dataDir, name),
    });
    return {
      url: `http://127.0.0.1:${port}`,
      adminUrl: `http://127.0.0.1:${adminPort}`,
      child: spawned.child,
      output: () => spawned.output().slice(-3000),
    };
  };
  // One after the other: the first creates the signing key, the second loads it.
  a = await spawnInstance(portA, adminA, 'a');
  await waitReady(a);
  b = await spawnInstance(portB, adminB, 'b');
  await waitReady(b);
  front = await startFront(frontPort);
}, 180_000);

afterAll(async () => {
  if (!shared) return;
  await new Promise((r) => front?.close(r));
  await Promise.all([a, b].filter(Boolean).map((i) => stop(i)));
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
  const redis = new Redis(process.env['REDIS_URL']!);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${REDIS_KEY_PREFIX}*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}, 60_000);

describeShared('scale-out: 2 auth-server processes, one issuer, on PostgreSQL and Redis', () => {
  test('one code, 100 concurrent redemptions spread over both instances: exactly one succeeds', async () => {
    const { config, clientId, user } = await signedIn();
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid offline_access api',
      resource: AUDIENCE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await browserLogin(url.href, user);
    const code = callback.searchParams.get('code')!;
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        token(i % 2 ? a : b, {
          grant_type: 'authorization_code',
          client_id: clientId,
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
        }),
      ),
    );
    expect(results.filter((r) => r?.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x?.status !== 200))
      expect(r?.body.error).toBe('invalid_grant');
  }, 60_000);

  test('a refresh token rotated through one and replayed through the other after its successor was used: grant revoked, alert', async () => {
    const { config, clientId, user } = await signedIn();
    const tokens = await pkceSignIn(config, user, {
      scope: 'openid offline_access api',
      resource: AUDIENCE,
    });
    const grantId = decodeJwt(tokens.access_token).payload.grant_id;
    const rt = (instance: Instance, refresh_token: string) =>
      token(instance, { grant_type: 'refresh_token', client_id: clientId, refresh_token });
    const second = await rt(a, tokens.refresh_token!);
    const third = await rt(b, second!.body.refresh_token);
    expect(third?.status).toBe(200);
    const replay = await rt(a, tokens.refresh_token!);
    expect(replay?.body.error).toBe('invalid_grant');
    expect((await rt(b, third!.body.refresh_token))?.body.error).toBe('invalid_grant');
    await new Promise((r) => setTimeout(r, 500)); // the alert is written after the answer
    expect(await reuseAudits(new Set([grantId]))).toBe(1);
  }, 60_000);

  test('one instance killed in a refresh storm: every chain goes on through the other, no reuse alert', async () => {
    const chains = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const { config, clientId, user } = await signedIn();
        const tokens = await pkceSignIn(config, user, {
          scope: 'openid offline_access api',
          resource: AUDIENCE,
        });
        return {
          clientId,
          refreshToken: tokens.refresh_token!,
          grantId: decodeJwt(tokens.access_token).payload.grant_id,
        };
      }),
    );
    let killed = false;
    const failures: string[] = [];
    // Each chain refreshes through A until A dies; a request that got no answer is sent
    // again, with the same refresh token, to B (what a client behind the balancer does).
    await Promise.all(
      chains.map(async (chain, n) => {
        for (let round = 0; round < 12; round++) {
          if (n === 0 && round === 4 && !killed) {
            killed = true;
            void stop(a, 'SIGKILL');
          }
          const form = {
            grant_type: 'refresh_token',
            client_id: chain.clientId,
            refresh_token: chain.refreshToken,
          };
          const answer = (await token(a, form)) ?? (await token(b, form));
          if (answer?.status !== 200) {
            failures.push(`${round}: ${answer?.status} ${JSON.stringify(answer?.body)}`);
            return;
          }
          chain.refreshToken = answer.body.refresh_token;
        }
      }),
    );
    expect(killed).toBe(true);
    expect(failures).toEqual([]);
    // Every chain still refreshes, on the survivor.
    for (const chain of chains) {
      const next = await token(b, {
        grant_type: 'refresh_token',
        client_id: chain.clientId,
        refresh_token: chain.refreshToken,
      });
      expect(next?.status).toBe(200);
    }
    expect(await reuseAudits(new Set(chains.map((c) => c.grantId)))).toBe(0);
  }, 120_000);
});
