export { selfServiceRoutes, type SelfServiceParts } from './routes.js';
