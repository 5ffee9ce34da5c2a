export { createDb, describeDb, type Db, type DbOptions } from './create-db.js';
export { migrateLatest, migrationSource } from './migrate.js';
export { deepFreeze, toCount, toJsonb } from './values.js';
export { coalesced } from './batch.js';
export { prepared } from './prepared.js';
export { isDatabaseUnavailable, isUniqueViolation } from './errors.js';
export { runServices, exitOnConfigError, type RunningService } from './service.js';
export type * from './rows.js';
