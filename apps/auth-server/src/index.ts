export { parseAuthConfig, ConfigError, type AuthConfig } from './kernel/config.js';
export { createAuthApp, type AuthDeps } from './app.js';
export type { AuthAppParts } from './routes.js';
export { startAuthServer, type RunningAuthServer } from './server.js';
export { DEMO_USERS } from './seed.js';
