/** Runs the authorization server alone: `pnpm --filter @portcullis/auth-server start`. */
import { createLogger, installLastResortGuard } from '@portcullis/observability';
import { createDb, describeDb, exitOnConfigError, runServices } from '@portcullis/db';
import { parseAuthConfig } from './config.js';
import { startAuthServer } from './server.js';

const config = exitOnConfigError(() => parseAuthConfig(process.env));
const logger = createLogger({ level: config.logLevel, base: { app: 'auth-server' } });
const dbOptions = { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
const db = createDb({ ...dbOptions, queryTimeoutMs: config.dbQueryTimeoutMs });
await runServices(
  logger,
  db,
  { auth: (database) => startAuthServer(config, { db, logger }, database) },
  { startTimeoutMs: config.dbStartTimeoutMs, description: describeDb(dbOptions) },
);
installLastResortGuard(logger);
