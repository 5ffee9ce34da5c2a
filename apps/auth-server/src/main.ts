/** Runs the authorization server alone: `pnpm --filter @portcullis/auth-server start`. */
import { createLogger, installLastResortGuard } from '@portcullis/observability';
import { createDb, exitOnConfigError, runServices } from '@portcullis/db';
import { parseAuthConfig } from './config.js';
import { startAuthServer } from './server.js';

const config = exitOnConfigError(() => parseAuthConfig(process.env));
const logger = createLogger({ level: config.logLevel, base: { app: 'auth-server' } });
const db = createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
await runServices(logger, db, { auth: () => startAuthServer(config, { db, logger }) });
installLastResortGuard(logger);
