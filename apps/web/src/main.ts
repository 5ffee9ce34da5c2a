/** Runs the browser demo alone: `pnpm --filter @portcullis/web start`. */
import { createLogger, exitOnConfigError, runServices } from '@portcullis/observability';
import { parseWebConfig } from './config.js';
import { startWebServer } from './server.js';

const config = exitOnConfigError(() => parseWebConfig(process.env));
const logger = createLogger({
  level: config.logLevel,
  format: config.logFormat,
  base: { app: 'web' },
});
await runServices(logger, { web: () => startWebServer(config, { logger }) });
