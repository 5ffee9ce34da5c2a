export { parseApiConfig, ConfigError, type ApiConfig } from './config.js';
export { createApiApp, type ApiDeps } from './app.js';
export { startApiServer, type RunningApiServer } from './server.js';
export { openApiDocument } from './openapi/offline.js';
