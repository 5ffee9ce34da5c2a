export { parseApiConfig, ConfigError, type ApiConfig } from './config.js';
export { createApiApp, type ApiDeps } from './app.js';
export { startApiServer, type RunningApiServer } from './server.js';
export { openApiDocument } from './openapi/offline.js';
export {
  API_SCOPES,
  Perm,
  PERMISSIONS,
  RESOURCES,
  type Permission,
  type Resource,
} from './permissions.js';
