/** Runs the API alone: `pnpm --filter @portcullis/api start`. */
import { createLogger, installLastResortGuard } from '@portcullis/observability';
import { createDb, exitOnConfigError, runServices } from '@portcullis/db';
import { parseApiConfig } from './config.js';
import { startApiServer } from './server.js';

const config = exitOnConfigError(() => parseApiConfig(process.env));
const logger = createLogger({ level: config.logLevel, base: { app: 'api' } });
const db = createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
await runServices(logger, db, { api: () => startApiServer(config, { db, logger }) });
installLastResortGuard(logger);
