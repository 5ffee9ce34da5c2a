import type { Knex } from 'knex';
import ClientPg from 'knex/lib/dialects/postgres/index.js';
import { QueryTimeoutError } from './errors.js';

/** The parts of a node-postgres client this module touches. */
interface PgConnection {
  connection: { stream: { destroy(): void } };
  __knex__disposed?: unknown;
  [ABANDONED]?: QueryTimeoutError;
}

const ABANDONED = Symbol('abandoned after a query timeout');

/** node-postgres's own message when `query_timeout` elapses. */
const isReadTimeout = (error: unknown) =>
  error instanceof Error && error.message === 'Query read timeout';

/**
 * A connection whose query got no answer in time is closed at once, never reused: its
 * server may be frozen with the query (and an open transaction) in flight. Closing the
 * socket means a server that wakes up later reads end-of-file after the last statement
 * it received, and aborts that transaction instead of committing it. Every later query
 * on the connection (the transaction's ROLLBACK) fails with the same error at once.
 */
function abandon(connection: PgConnection, error: QueryTimeoutError): void {
  connection[ABANDONED] = error;
  // knex's pool destroys a disposed connection instead of handing it out again.
  connection.__knex__disposed = error;
  connection.connection.stream.destroy();
}

/** knex's PostgreSQL client with the rule above; see the README's "Database faults". */
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
