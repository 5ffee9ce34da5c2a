/** Runs the browser demo alone: `pnpm --filter @portcullis/web start`. */
import { installLastResortGuard } from '@portcullis/observability';
import { pino } from 'pino';
import { ConfigError, parseWebConfig, type WebConfig } from './config.js';
import { startWebServer } from './server.js';

let config: WebConfig;
try {
  config = parseWebConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(78); // EX_CONFIG, as the other apps
}
const logger = pino({ level: config.logLevel, base: { app: 'web' } });
const web = await startWebServer(config, { logger });
installLastResortGuard(logger);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void web.close().finally(() => process.exit(0));
  });
}
