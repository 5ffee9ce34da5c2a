export { createDb, describeDb, type Db, type DbOptions } from './create-db.js';
export { migrateLatest, migrationSource } from './migrate.js';
export { toCount, toJsonb } from './values.js';
export { coalesced } from './batch.js';
export { createReadCache, type ReadCache, type ReadCacheOptions } from './read-cache.js';
export { prepared } from './prepared.js';
export { isDatabaseUnavailable, isUniqueViolation } from './errors.js';
export { runServices, exitOnConfigError, type RunningService } from './service.js';
export type * from './rows.js';
