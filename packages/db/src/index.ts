export {
  createDb,
  describeDb,
  statementTimeoutMs,
  type Db,
  type DbOptions,
  type DbTransaction,
} from './create-db.js';
export {
  databaseSettingsOf,
  databaseVariables,
  DEFAULT_QUERY_TIMEOUT_MS,
  redisSettingsOf,
  redisVariables,
  type DatabaseSettings,
  type RedisSettings,
} from './settings.js';
export { waitForDatabase } from './wait-for-database.js';
export { migrateLatest, migrationSource } from './migrate.js';
export { toCount, toJsonb } from './values.js';
export { coalesced } from './batch.js';
export { createReadCache, type ReadCache, type ReadCacheOptions } from './read-cache.js';
export { prepared } from './prepared.js';
export { isDatabaseUnavailable, isUniqueViolation, QueryTimeoutError } from './errors.js';
export { openDatabase, type OpenDatabaseOptions } from './service.js';
export {
  createRevocationStore,
  type NewRevocation,
  type RevocationRow,
  type RevocationStore,
} from './revocations.js';
export {
  createSharedDenyList,
  type SharedDenyList,
  type SharedDenyListOptions,
} from './deny-list.js';
export type * from './rows.js';
export {
  createRoleStore,
  createSharedCatalog,
  createSharedRoles,
  ROLE_NAME,
  type CatalogResource,
  type RoleGrant,
  type RoleHolders,
  type RoleRecord,
  type RoleStore,
  type SharedCatalog,
  type SharedCatalogOptions,
  type SharedRoles,
  type SharedRolesOptions,
} from './roles.js';
export {
  BUILT_IN_RESOURCE_ID,
  createResourceStore,
  identifierOf,
  PERMISSION_NAME,
  type NewResource,
  type PermissionRecord,
  type ResourceRecord,
  type ResourceSettings,
  type ResourceStore,
} from './resources.js';
