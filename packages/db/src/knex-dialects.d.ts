// knex ships no types for its dialect classes; bounded-pg-client.ts extends the PostgreSQL one.
declare module 'knex/lib/dialects/postgres/index.js' {
  import { Knex } from 'knex';
  class ClientPg extends Knex.Client {
    _query(connection: unknown, obj: unknown): Promise<unknown>;
  }
  export default ClientPg;
}
