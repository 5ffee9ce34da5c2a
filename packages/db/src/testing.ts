import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { createDb, type Db } from './create-db.js';
import { migrateLatest } from './migrate.js';

export interface TestDatabase {
  db: Db;
  /** The PostgreSQL URL of this test database, or undefined for embedded PGlite. */
  url: string | undefined;
  kind: 'postgres' | 'pglite';
  /** Closes the connection and drops the database. */
  close(): Promise<void>;
}

/**
 * Gives the calling test file a database of its own: a fresh in-memory PGlite, or, when
 * DATABASE_URL is set, a freshly created PostgreSQL database that `close()` drops.
 * Start one per test file (PGlite takes a few seconds to boot).
 */
export async function createTestDatabase(
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const baseUrl = process.env['DATABASE_URL'];
  let result: TestDatabase;
  if (baseUrl) {
    const name = `portcullis_test_${randomBytes(6).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: baseUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`CREATE DATABASE ${name}`);
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    const db = createDb({ databaseUrl: url.toString(), poolMax: 10 });
    result = {
      db,
      url: url.toString(),
      kind: 'postgres',
      async close() {
        await db.destroy();
        try {
          await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await admin.destroy();
        }
      },
    };
  } else {
    const db = createDb({});
    result = { db, url: undefined, kind: 'pglite', close: () => db.destroy() };
  }
  if (options.migrate !== false) await migrateLatest(result.db);
  return result;
}

export { startTcpProxy, viaProxy, type TcpProxy } from './tcp-proxy.js';
