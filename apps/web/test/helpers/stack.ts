import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { RunningAuthServer } from '@portcullis/auth-server';
import { startTestAuthServer } from '@portcullis/testing/auth-server';
import { freePort, TEST_API_AUDIENCE as API_AUDIENCE } from '@portcullis/testing';
import { parseApiConfig, startApiServer, type RunningApiServer } from '@portcullis/api';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import {
  parseWebConfig,
  startWebServer,
  type RunningWebServer,
  type WebConfig,
} from '../../src/index.js';
import { buildPage } from '../../../../infra/scripts/build.mjs';

/** Known to the tests so they can open the sealed cookies the browser holds. */
export const COOKIE_KEY = 'test-cookie-key-0123456789abcdef0123456789';

export interface Stack {
  auth: RunningAuthServer;
  api: RunningApiServer | undefined;
  web: RunningWebServer;
  webConfig: WebConfig;
  /** http://localhost:<port>: what the browser opens. */
  webOrigin: string;
  issuer: string;
  /** The browser-facing API base URL (localhost, the CORS-allowed origin calls it). */
  apiUrl: string;
  database: TestDatabase;
  admin(pathname: string, body: unknown): Promise<Record<string, unknown>>;
  createUser(
    roles: string[],
    who?: { email: string; name: string },
  ): Promise<{ id: string; email: string; password: string }>;
  close(): Promise<void>;
}

let seq = 0;

/**
 * The real authorization server, (optionally) the real API and the web app on one fresh
 * database, all addressed as `localhost` like a developer's browser would: the issuer
 * and the SPA's redirect URI are fixed before start, so their ports are picked first.
 * The SPA client is registered through the admin API, as an operator would. The page is
 * built from its sources for this stack, as `pnpm build` builds it.
 */
export async function startStack(
  options: { api?: boolean; refreshGraceMs?: number } = {},
): Promise<Stack> {
  const [authPort, webPort] = [await freePort(), await freePort()];
  const issuer = `http://localhost:${authPort}`;
  const webOrigin = `http://localhost:${webPort}`;
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-web-'));
  const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const pageDir = path.join(dataDir, 'page');
  await buildPage(pageDir);

  const testAuth = await startTestAuthServer(
    { AUTH_PORT: String(authPort), ISSUER: issuer },
    { db: database.db, logger },
  );
  const auth = testAuth.server;

  let api: RunningApiServer | undefined;
  let apiUrl = 'http://localhost:9';
  if (options.api !== false) {
    api = await startApiServer(
      parseApiConfig({
        NODE_ENV: 'test',
        API_PORT: '0',
        ISSUER: issuer,
        API_AUDIENCE,
        CORS_ORIGINS: webOrigin,
        DATA_DIR: dataDir,
      }),
      { db: database.db, logger },
    );
    apiUrl = api.url.replace('127.0.0.1', 'localhost');
  }

  async function admin(pathname: string, body: unknown) {
    const { status, body: json } = await testAuth.admin('POST', pathname, body);
    if (status !== 201) throw new Error(`${pathname}: ${status} ${JSON.stringify(json)}`);
    return json as Record<string, unknown>;
  }

  const clientId = `web-${Date.now().toString(36)}`;
  await admin('/admin/clients', {
    client_id: clientId,
    client_name: 'Portcullis demo SPA',
    token_endpoint_auth_method: 'none',
    redirect_uris: [`${webOrigin}/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
  });

  const webConfig = parseWebConfig({
    NODE_ENV: 'test',
    WEB_PORT: String(webPort),
    WEB_ORIGIN: webOrigin,
    ISSUER: issuer,
    API_URL: apiUrl,
    API_AUDIENCE,
    WEB_CLIENT_ID: clientId,
    COOKIE_KEYS: COOKIE_KEY,
    DATA_DIR: dataDir,
  });
  const web = await startWebServer(webConfig, {
    logger,
    pageDir: pathToFileURL(`${pageDir}/`),
    ...(options.refreshGraceMs !== undefined ? { refreshGraceMs: options.refreshGraceMs } : {}),
  });

  return {
    auth,
    api,
    web,
    webConfig,
    webOrigin,
    issuer,
    apiUrl,
    database,
    admin,
    async createUser(roles, who) {
      const email = who?.email ?? `user${seq++}-${Date.now().toString(36)}@example.com`;
      const password = `pw-${Math.random().toString(36).slice(2)}-long`;
      const name = who?.name ?? `Test ${roles.join('/')}`;
      const user = await admin('/admin/users', { email, password, roles, name });
      return { id: String(user['id']), email, password };
    },
    async close() {
      await web.close();
      await api?.close();
      await testAuth.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
