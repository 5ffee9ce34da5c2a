export { parseWebConfig, webConfigFromEnv, ConfigError, type WebConfig } from './config.js';
export { createWebApp, type WebDeps } from './app.js';
export { startWebServer, type RunningWebServer } from './server.js';
