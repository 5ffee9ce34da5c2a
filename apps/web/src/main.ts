/** Runs the browser demo alone: `pnpm --filter @portcullis/web start`. */
import { exitOnConfigError, runServices } from '@portcullis/observability';
import { pino } from 'pino';
import { parseWebConfig } from './config.js';
import { startWebServer } from './server.js';

const config = exitOnConfigError(() => parseWebConfig(process.env));
const logger = pino({ level: config.logLevel, base: { app: 'web' } });
await runServices(logger, { web: () => startWebServer(config, { logger }) });
