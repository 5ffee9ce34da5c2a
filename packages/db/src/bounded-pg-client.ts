import type { Knex } from 'knex';
import ClientPg from 'knex/lib/dialects/postgres/index.js';
import { QueryTimeoutError } from './errors.js';

interface PgConnection {
  connection: { stream: { destroy(): void } };
  __knex__disposed?: unknown;
  [ABANDONED]?: QueryTimeoutError;
}

const ABANDONED = Symbol('abandoned after a query timeout');

const isReadTimeout = (error: unknown) =>
  error instanceof Error && error.message === 'Query read timeout';

// Closed, never reused: a frozen server that wakes reads end-of-file and aborts the transaction.
function abandon(connection: PgConnection, error: QueryTimeoutError): void {
  connection[ABANDONED] = error;
  // knex's pool destroys a disposed connection instead of handing it out again.
  connection.__knex__disposed = error;
  connection.connection.stream.destroy();
}

/** knex's PostgreSQL client with that rule (docs/robustness.md "Database faults"). */
export function boundedPgClient(queryTimeoutMs: number): typeof Knex.Client {
  class BoundedPgClient extends ClientPg {
    override async _query(connection: PgConnection, obj: unknown): Promise<unknown> {
      const abandoned = connection[ABANDONED];
      if (abandoned) throw abandoned;
      try {
        return await super._query(connection, obj);
      } catch (error) {
        if (!isReadTimeout(error)) throw error;
        const timeout = new QueryTimeoutError(queryTimeoutMs, error);
        abandon(connection, timeout);
        throw timeout;
      }
    }
  }
  return BoundedPgClient;
}
