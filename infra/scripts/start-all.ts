/**
 * `npm start`: both apps in one process on one database (embedded PGlite in DATA_DIR
 * unless DATABASE_URL is set). Each app can also run alone through its own main.ts.
 */
import { pino } from 'pino';
import { createDb, describeDb, exitOnConfigError, runServices } from '@portcullis/db';
import { parseAuthConfig, startAuthServer } from '@portcullis/auth-server';
import { parseApiConfig, startApiServer } from '@portcullis/api';

const auth = exitOnConfigError(() => parseAuthConfig(process.env));
const api = exitOnConfigError(() => parseApiConfig(process.env));
const logger = pino({ level: auth.logLevel, base: {} });
const dbOptions = { databaseUrl: auth.databaseUrl, dataDir: auth.dataDir };
const db = createDb(dbOptions);
logger.info({ database: describeDb(dbOptions) }, 'opening database');

await runServices(logger, db, {
  auth: () => startAuthServer(auth, { db, logger: logger.child({ app: 'auth-server' }) }),
  api: () => startApiServer(api, { db, logger: logger.child({ app: 'api' }) }),
});
