import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import {
  parseAuthConfig,
  startAuthServer,
  type AuthDeps,
  type RunningAuthServer,
} from '@portcullis/auth-server';
import type { Db } from '@portcullis/db';
import { createTestDatabase } from '@portcullis/db/testing';
import { TEST_API_AUDIENCE } from './constants.js';
import type { AdminResponse, AuthServerHandle } from './server-handle.js';

export type { AdminResponse, JsonBody } from './server-handle.js';

export interface TestAuthServer extends AuthServerHandle {
  server: RunningAuthServer;
  apiAudience: string;
  /** Every log line, parsed (only when the caller gave no logger). */
  logs: Record<string, unknown>[];
  /** A second instance on this server's database and DATA_DIR (same generated secrets), closed with it. */
  startInstance(env?: Record<string, string>, deps?: Partial<AuthDeps>): Promise<TestAuthServer>;
  close(): Promise<void>;
}

/** The real auth server with test defaults; a fresh database unless `deps.db` is given. */
export async function startTestAuthServer(
  env: Record<string, string> = {},
  deps: Partial<AuthDeps> = {},
): Promise<TestAuthServer> {
  const ownDatabase = deps.db ? undefined : await createTestDatabase();
  const db = deps.db ?? ownDatabase!.db;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-auth-'));
  let instance: TestAuthServer;
  try {
    instance = await startInstance({ ...TEST_DEFAULTS, DATA_DIR: dataDir, ...env }, deps, db);
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    await ownDatabase?.close();
    throw error;
  }
  return {
    ...instance,
    database: ownDatabase ?? instance.database,
    async close() {
      await instance.close();
      await ownDatabase?.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const TEST_DEFAULTS = {
  NODE_ENV: 'test',
  AUTH_PORT: '0',
  ADMIN_PORT: '0',
  API_AUDIENCE: TEST_API_AUDIENCE,
  SEED_DEMO: 'false',
};

async function startInstance(
  env: Record<string, string>,
  deps: Partial<AuthDeps>,
  db: Db,
): Promise<TestAuthServer> {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      cb();
    },
  });
  const server = await startAuthServer(parseAuthConfig(env), {
    logger: pino({ level: 'info' }, sink),
    print: () => {},
    showSecret: () => {},
    ...deps,
    db,
  });
  const others = new Set<TestAuthServer>();

  async function admin(
    method: string,
    pathname: string,
    body?: unknown,
    token: string | null = server.adminToken,
  ): Promise<AdminResponse> {
    const headers: Record<string, string> = {};
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.adminUrl}${pathname}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, res };
  }

  return {
    server,
    database: { db, close: async () => {} },
    issuer: server.issuer,
    apiAudience: env['API_AUDIENCE']!,
    logs,
    admin,
    async startInstance(overrides = {}, moreDeps = {}) {
      const other = await startInstance(
        { ...env, AUTH_PORT: '0', ADMIN_PORT: '0', ...overrides },
        { ...deps, ...moreDeps },
        db,
      );
      others.add(other);
      return {
        ...other,
        async close() {
          if (others.delete(other)) await other.close();
        },
      };
    },
    async close() {
      await Promise.all([...others].map((other) => other.close()));
      others.clear();
      await server.close();
    },
  };
}
