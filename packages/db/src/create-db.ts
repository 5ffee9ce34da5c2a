import { mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { PGlite } from '@electric-sql/pglite';
import ClientPgLite from 'knex-pglite';
import { boundedPgClient } from './bounded-pg-client.js';
import { DEFAULT_QUERY_TIMEOUT_MS } from './settings.js';

export type Db = Knex;
/** A transaction of `Db`; writes given one commit or roll back together. */
export type DbTransaction = Knex.Transaction;

export interface DbOptions {
  /** `postgres://…`; when absent an embedded PGlite database is used. */
  databaseUrl?: string | undefined;
  /** Directory for the embedded database; omitted means in-memory (tests). */
  dataDir?: string | undefined;
  poolMax?: number;
  searchPath?: string;
  /** One round trip's bound (DB_QUERY_TIMEOUT), default 5 s; PGlite has none (it runs in-thread). */
  queryTimeoutMs?: number | undefined;
  /** An in-memory embedded database starts as a copy of this PGlite dump (tests' template). */
  embeddedImage?: Blob | undefined;
}

// The server cancels first, so a merely slow query ends with its own error and a reusable connection.
export function statementTimeoutMs(queryTimeoutMs: number): number {
  return Math.round(queryTimeoutMs * 0.8);
}

// Less connection failures: the caller gets the same error and logs it once.
function knexWarning(message: string): void {
  if (/^(Acquire connection error|Connection Error): /.test(message)) return;
  console.warn(message);
}

// PGlite is single-connection: never use the base knex inside a transaction (they deadlock).
export function createDb(options: DbOptions): Db {
  if (options.databaseUrl) {
    const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    return knexFactory({
      client: boundedPgClient(queryTimeoutMs),
      // Short timeouts: with the database down a request fails with 503 in about 2 s instead of queueing.
      connection: {
        connectionString: options.databaseUrl,
        connectionTimeoutMillis: 2_000,
        statement_timeout: statementTimeoutMs(queryTimeoutMs),
        // The server aborts a held transaction before the client answers 503 (docs/robustness.md "Database faults").
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

export function describeDb(options: DbOptions): string {
  if (options.databaseUrl) {
    const url = new URL(options.databaseUrl);
    return `postgresql ${url.hostname}:${url.port || 5432}${url.pathname}`;
  }
  return options.dataDir ? `embedded PGlite in ${options.dataDir}` : 'embedded PGlite in memory';
}
