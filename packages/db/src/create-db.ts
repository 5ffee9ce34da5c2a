import { mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { PGlite } from '@electric-sql/pglite';
import ClientPgLite from 'knex-pglite';
import { boundedPgClient } from './bounded-pg-client.js';
import { DEFAULT_QUERY_TIMEOUT_MS } from './settings.js';

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
  /**
   * Bound of one round trip to PostgreSQL (DB_QUERY_TIMEOUT), default 5 s. PGlite runs
   * in this thread and has no statement timeout: it cannot hang on a network.
   */
  queryTimeoutMs?: number | undefined;
  /** An in-memory embedded database starts as a copy of this PGlite dump (tests' template). */
  embeddedImage?: Blob | undefined;
}

/**
 * The server cancels a statement a little before the client gives up on it, so a merely
 * slow query ends with PostgreSQL's own error and a reusable connection; the client-side
 * bound is for a server that stops answering altogether (frozen, partitioned).
 */
export function statementTimeoutMs(queryTimeoutMs: number): number {
  return Math.round(queryTimeoutMs * 0.8);
}

/**
 * knex's warnings, less those about a connection that failed or was discarded: the same
 * error reaches the query's caller, which answers 503 and logs it once, without a stack.
 */
function knexWarning(message: string): void {
  if (/^(Acquire connection error|Connection Error): /.test(message)) return;
  console.warn(message);
}

/**
 * The one knex factory of the project. PGlite is single-connection: callers must never
 * use the base knex inside a transaction, or the two wait for each other forever.
 */
export function createDb(options: DbOptions): Db {
  if (options.databaseUrl) {
    const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    return knexFactory({
      client: boundedPgClient(queryTimeoutMs),
      // Short connect and acquire timeouts: with the database down, a request fails with
      // 503 in about 2 s (well inside a client's 15 s timeout) instead of queueing. Every
      // round trip is bounded too (README "Database faults").
      connection: {
        connectionString: options.databaseUrl,
        connectionTimeoutMillis: 2_000,
        statement_timeout: statementTimeoutMs(queryTimeoutMs),
        // A transaction whose next statement is held in the network is aborted by the
        // server before the client gives up and answers 503 (README "Database faults").
        idle_in_transaction_session_timeout: statementTimeoutMs(queryTimeoutMs),
        query_timeout: queryTimeoutMs,
        keepAlive: true,
      },
      pool: { min: 0, max: options.poolMax ?? 10 },
      acquireConnectionTimeout: 2_500,
      log: { warn: knexWarning },
      ...(options.searchPath ? { searchPath: [options.searchPath] } : {}),
    });
  }
  let connection: { filename?: string; pglite?: PGlite } = {};
  if (options.embeddedImage) {
    connection = { pglite: new PGlite({ loadDataDir: options.embeddedImage }) };
  } else if (options.dataDir) {
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
