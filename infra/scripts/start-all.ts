/**
 * `npm start`: both apps in one process on one database (embedded PGlite in DATA_DIR
 * unless DATABASE_URL is set). Each app can also run alone through its own main.ts.
 */
import { pino } from 'pino';
import { createDb, describeDb, migrateLatest } from '@portcullis/db';
import { parseAuthConfig, startAuthServer } from '@portcullis/auth-server';
import { parseApiConfig, startApiServer } from '@portcullis/api';

function loadConfigs() {
  try {
    return { auth: parseAuthConfig(process.env), api: parseApiConfig(process.env) };
  } catch (error) {
    console.error((error as Error).message);
    process.exit(78); // EX_CONFIG
  }
}

const { auth, api } = loadConfigs();
const logger = pino({ level: auth.logLevel, base: { app: 'portcullis' } });
const dbOptions = { databaseUrl: auth.databaseUrl, dataDir: auth.dataDir };
const db = createDb(dbOptions);

const applied = await migrateLatest(db);
logger.info({ database: describeDb(dbOptions), applied }, 'database ready');

const authServer = await startAuthServer(auth, {
  db,
  logger: logger.child({ app: 'auth-server' }),
});
const apiServer = await startApiServer(api, { db, logger: logger.child({ app: 'api' }) });
logger.info({ auth: authServer.url, api: apiServer.url }, 'Portcullis is up');

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  await Promise.allSettled([authServer.close(), apiServer.close()]);
  await db.destroy();
  logger.info('stopped');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
