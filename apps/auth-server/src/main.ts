/** Runs the authorization server alone: `pnpm --filter @portcullis/auth-server start`. */
import { createLogger, exitOnConfigError, runServices } from '@portcullis/observability';
import { createDb, describeDb, openDatabase } from '@portcullis/db';
import { parseAuthConfig } from './kernel/config.js';
import { startAuthServer } from './server.js';

const config = exitOnConfigError(() => parseAuthConfig(process.env));
const logger = createLogger({
  level: config.logLevel,
  format: config.logFormat,
  base: { app: 'auth-server' },
});
const dbOptions = { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
const db = createDb({ ...dbOptions, queryTimeoutMs: config.dbQueryTimeoutMs });
await runServices(
  logger,
  { auth: (database) => startAuthServer(config, { db, logger }, database) },
  openDatabase(db, {
    startTimeoutMs: config.dbStartTimeoutMs,
    description: describeDb(dbOptions),
    logger,
  }),
);
