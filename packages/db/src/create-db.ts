import { mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';

export type Db = Knex;

export interface DbOptions {
  /** `postgres://…`; when absent an embedded PGlite database is used. */
  databaseUrl?: string | undefined;
  /** Directory for the embedded database; omitted means in-memory (tests). */
  dataDir?: string | undefined;
  /** Pool size for PostgreSQL (PGlite always has exactly one connection). */
  poolMax?: number;
  /** PostgreSQL search_path, used by test helpers that isolate by schema. */
  searchPath?: string;
}

/**
 * The one knex factory of the project. PGlite is single-connection: callers must never
 * use the base knex inside a transaction, or the two wait for each other forever.
 */
export function createDb(options: DbOptions): Db {
  if (options.databaseUrl) {
    return knexFactory({
      client: 'pg',
      // Short connect and acquire timeouts: with the database down, a request fails with
      // 503 in about 2 s (well inside a client's 15 s timeout) instead of queueing.
      connection: { connectionString: options.databaseUrl, connectionTimeoutMillis: 2_000 },
      pool: { min: 0, max: options.poolMax ?? 10 },
      acquireConnectionTimeout: 2_500,
      ...(options.searchPath ? { searchPath: [options.searchPath] } : {}),
    });
  }
  let connection: { filename?: string } = {};
  if (options.dataDir) {
    const filename = path.join(options.dataDir, 'pgdata');
    mkdirSync(filename, { recursive: true });
    connection = { filename };
  }
  return knexFactory({
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection,
  } as Knex.Config);
}

/** A printable, password-free description of where the database lives. */
export function describeDb(options: DbOptions): string {
  if (options.databaseUrl) {
    const url = new URL(options.databaseUrl);
    return `postgresql ${url.hostname}:${url.port || 5432}${url.pathname}`;
  }
  return options.dataDir ? `embedded PGlite in ${options.dataDir}` : 'embedded PGlite in memory';
}
