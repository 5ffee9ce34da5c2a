import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

const names = new Map<string, string>();

// Named prepared statement, for hot fixed texts (docs/performance.md "Mechanisms"); name its columns,
// no `*`: PostgreSQL will not reuse a plan whose result columns a migration changed.
export function prepared(
  db: Knex | Knex.Transaction,
  sql: string,
  bindings: readonly Knex.RawBinding[],
): Knex.Raw {
  let name = names.get(sql);
  if (name === undefined) {
    name = `portcullis_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return db.raw(sql, bindings).options({ name });
}
