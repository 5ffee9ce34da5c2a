/** `pnpm db:migrate`: applies pending migrations to DATABASE_URL or the embedded database. */
import { createDb, describeDb, migrateLatest } from '@portcullis/db';
import { parseAuthConfig } from '@portcullis/auth-server';

const config = parseAuthConfig(process.env);
const options = { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
// A long migration needs a larger DB_QUERY_TIMEOUT for this run (README "Database faults").
const db = createDb({ ...options, queryTimeoutMs: config.dbQueryTimeoutMs });
try {
  const applied = await migrateLatest(db);
  console.log(`${describeDb(options)}: ${applied.length ? applied.join(', ') : 'up to date'}`);
} finally {
  await db.destroy();
}
