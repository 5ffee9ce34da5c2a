export { parseAuthConfig, ConfigError, type AuthConfig } from './kernel/config.js';
export { createAuthApp, type AuthDeps, type AuthAppParts } from './app.js';
export { startAuthServer, type RunningAuthServer } from './server.js';
export { DEMO_USERS } from './seed.js';
