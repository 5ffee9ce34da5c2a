export { parseAuthConfig, ConfigError, type AuthConfig } from './config.js';
export { createAuthApp, type AuthDeps } from './app.js';
export { startAuthServer, type RunningAuthServer } from './server.js';
