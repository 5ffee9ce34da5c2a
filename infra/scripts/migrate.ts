/** `pnpm db:migrate`: applies pending migrations to DATABASE_URL or the embedded database. */
import { createDb, describeDb, migrateLatest } from '@portcullis/db';
import { parseAuthConfig } from '@portcullis/auth-server';

const config = parseAuthConfig(process.env);
const options = { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
const db = createDb(options);
try {
  const applied = await migrateLatest(db);
  console.log(`${describeDb(options)}: ${applied.length ? applied.join(', ') : 'up to date'}`);
} finally {
  await db.destroy();
}
