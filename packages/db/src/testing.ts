import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { createDb, type Db } from './create-db.js';
import { migrateLatest } from './migrate.js';
import { startTcpProxy, viaProxy, type TcpProxy } from './tcp-proxy.js';

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

export interface ProxiedTestDatabase extends TestDatabase {
  /** Between `proxiedUrl` and PostgreSQL: freeze it to play a database that stops answering. */
  proxy: TcpProxy;
  /** The test database's URL through the proxy, for the server under test. */
  proxiedUrl: string;
  /** Sessions PostgreSQL still holds open inside a transaction on this database. */
  openTransactions(): Promise<number>;
}

/**
 * A fresh PostgreSQL test database (DATABASE_URL must be set) behind a TCP proxy the test
 * owns, for tests of a database that freezes or goes away while the real server stays up
 * for the tests beside it. `close()` closes the proxy and drops the database; `db` goes
 * straight to PostgreSQL, for the test's own checks.
 */
export async function createProxiedTestDatabase(): Promise<ProxiedTestDatabase> {
  const database = await createTestDatabase();
  if (!database.url) {
    await database.close();
    throw new Error('a proxied test database needs PostgreSQL (DATABASE_URL)');
  }
  const target = new URL(database.url);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  return {
    ...database,
    proxy,
    proxiedUrl: viaProxy(database.url, proxy),
    async openTransactions() {
      const { rows } = (await database.db.raw(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and state like 'idle in transaction%'`,
      )) as { rows: { n: number }[] };
      return rows[0]!.n;
    },
    async close() {
      proxy.thaw();
      await proxy.close();
      await database.close();
    },
  };
}

export { startTcpProxy, viaProxy, type TcpProxy } from './tcp-proxy.js';
