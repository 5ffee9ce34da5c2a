export { createDb, describeDb, statementTimeoutMs, type Db, type DbOptions } from './create-db.js';
export { databaseVariables, DEFAULT_QUERY_TIMEOUT_MS } from './settings.js';
export { StartupError, waitForDatabase } from './wait-for-database.js';
export { migrateLatest, migrationSource } from './migrate.js';
export { toCount, toJsonb } from './values.js';
export { coalesced } from './batch.js';
export { createReadCache, type ReadCache, type ReadCacheOptions } from './read-cache.js';
export { prepared } from './prepared.js';
export { isDatabaseUnavailable, isUniqueViolation, QueryTimeoutError } from './errors.js';
export {
  runServices,
  exitOnConfigError,
  type RunningService,
  type ServiceStarter,
  type StartOptions,
} from './service.js';
export type * from './rows.js';
