import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import {
  parseAuthConfig,
  startAuthServer,
  type AuthDeps,
  type RunningAuthServer,
} from '../../src/index.js';

/** Response bodies as tests read them: any shape, asserted by the test itself. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonBody = Record<string, any>;

export interface TestAuthServer {
  server: RunningAuthServer;
  database: TestDatabase;
  issuer: string;
  apiAudience: string;
  logs: Record<string, unknown>[];
  admin(
    method: string,
    pathname: string,
    body?: unknown,
    token?: string | null,
  ): Promise<{ status: number; body: JsonBody; res: Response }>;
  close(): Promise<void>;
}

export const API_AUDIENCE = 'http://api.portcullis.test';

/** Starts the real server on port 0 with a fresh database and DATA_DIR. */
export async function startTestAuthServer(
  env: Record<string, string> = {},
  deps: Partial<AuthDeps> = {},
): Promise<TestAuthServer> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-auth-'));
  const config = parseAuthConfig({
    NODE_ENV: 'test',
    AUTH_PORT: '0',
    ADMIN_PORT: '0',
    DATA_DIR: dataDir,
    API_AUDIENCE,
    SEED_DEMO: 'false',
    ...env,
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      cb();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const server = await startAuthServer(config, {
    db: database.db,
    logger,
    print: () => {},
    ...deps,
  });

  async function admin(
    method: string,
    pathname: string,
    body?: unknown,
    token: string | null = server.adminToken,
  ) {
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
    database,
    issuer: server.issuer,
    apiAudience: API_AUDIENCE,
    logs,
    admin,
    async close() {
      await server.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
