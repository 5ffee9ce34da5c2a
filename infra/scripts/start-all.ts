/**
 * `npm start`: both apps and the browser demo in one process on one database (embedded
 * PGlite in DATA_DIR unless DATABASE_URL is set). Each app can also run alone through
 * its own main.ts.
 */
import { createLogger, exitOnConfigError, runServices } from '@portcullis/observability';
import { createDb, describeDb, openDatabase } from '@portcullis/db';
import { parseAuthConfig, startAuthServer } from '@portcullis/auth-server';
import { parseApiConfig, startApiServer } from '@portcullis/api';
import { parseWebConfig, startWebServer } from '@portcullis/web';

// The demo opens sign-up (README "Sign-up") unless SIGNUP says otherwise; never in production.
const demoSignup = process.env['NODE_ENV'] === 'production' ? {} : { SIGNUP: 'open' };
const auth = exitOnConfigError(() => parseAuthConfig({ ...demoSignup, ...process.env }));
const web = exitOnConfigError(() =>
  parseWebConfig({
    ...process.env,
    // The demo calls the API started here unless told otherwise.
    API_URL: process.env['API_URL'] || `http://localhost:${process.env['API_PORT'] || 3000}`,
  }),
);
// The demo SPA calls the API from its own origin: allow it unless CORS_ORIGINS says otherwise.
const api = exitOnConfigError(() =>
  parseApiConfig({ ...process.env, CORS_ORIGINS: process.env['CORS_ORIGINS'] || web.origin }),
);
const logger = createLogger({ level: auth.logLevel, format: auth.logFormat });
const dbOptions = { databaseUrl: auth.databaseUrl, dataDir: auth.dataDir };
const db = createDb({ ...dbOptions, queryTimeoutMs: auth.dbQueryTimeoutMs });
logger.info({ database: describeDb(dbOptions) }, 'opening database');

await runServices(
  logger,
  {
    auth: (database) =>
      startAuthServer(auth, { db, logger: logger.child({ app: 'auth-server' }) }, database),
    api: (database) => startApiServer(api, { db, logger: logger.child({ app: 'api' }) }, database),
    web: () => startWebServer(web, { logger: logger.child({ app: 'web' }) }),
  },
  openDatabase(db, {
    startTimeoutMs: auth.dbStartTimeoutMs,
    description: describeDb(dbOptions),
    logger,
  }),
);
