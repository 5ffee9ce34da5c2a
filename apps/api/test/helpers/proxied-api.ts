import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '@portcullis/db';
import {
  createProxiedTestDatabase,
  type ProxiedTestDatabase,
  type TcpProxy,
} from '@portcullis/db/testing';
import { TEST_API_AUDIENCE } from '@portcullis/testing';
import { pino } from 'pino';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../../src/index.js';
import type { PaymentProvider } from '../../src/payments/provider.js';
import { makeApiKey, makeUser } from './factories.js';

export interface ProxiedApi {
  database: ProxiedTestDatabase;
  proxy: TcpProxy;
  /** The API's database handle, through the proxy. */
  db: Db;
  api: RunningApiServer;
  /** An admin, and an API key of theirs with the given permissions. */
  ownerId: string;
  apiKey: string;
  close(): Promise<void>;
}

/**
 * The API on a PostgreSQL test database it reaches through a TCP proxy the test owns
 * (createProxiedTestDatabase), for tests of a database that freezes or goes away. Needs
 * DATABASE_URL. `close` thaws the proxy first, so nothing waits on a frozen database.
 */
export async function startProxiedApi(
  permissions: string[],
  options: { paymentProvider?: PaymentProvider } = {},
): Promise<ProxiedApi> {
  const database = await createProxiedTestDatabase();
  const db = createDb({ databaseUrl: database.proxiedUrl });
  const dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-pg-proxied-'));
  const api = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: '0',
      ISSUER: 'http://127.0.0.1:9',
      API_AUDIENCE: TEST_API_AUDIENCE,
      DATA_DIR: dataDir,
    }),
    {
      db,
      logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
      ...(options.paymentProvider ? { paymentProvider: options.paymentProvider } : {}),
    },
  );
  const ownerId = (await makeUser(database.db, ['admin'])).id;
  return {
    database,
    proxy: database.proxy,
    db,
    api,
    ownerId,
    apiKey: await makeApiKey(database.db, ownerId, permissions),
    async close() {
      database.proxy.thaw();
      await api.close();
      await db.destroy();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
