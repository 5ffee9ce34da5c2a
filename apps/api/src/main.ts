/** Runs the API alone: `pnpm --filter @portcullis/api start`. */
import { createLogger, exitOnConfigError, runServices } from '@portcullis/observability';
import { createDb, describeDb, openDatabase } from '@portcullis/db';
import { parseApiConfig } from './config.js';
import { startApiServer } from './server.js';

const config = exitOnConfigError(() => parseApiConfig(process.env));
const logger = createLogger({
  level: config.logLevel,
  format: config.logFormat,
  base: { app: 'api' },
});
const dbOptions = { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
const db = createDb({ ...dbOptions, queryTimeoutMs: config.dbQueryTimeoutMs });
await runServices(
  logger,
  { api: (database) => startApiServer(config, { db, logger }, database) },
  openDatabase(db, {
    startTimeoutMs: config.dbStartTimeoutMs,
    description: describeDb(dbOptions),
    logger,
  }),
);
