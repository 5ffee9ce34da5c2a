import type { ServiceDependency } from '@portcullis/observability';
import type { Db } from './create-db.js';
import { migrateLatest } from './migrate.js';
import { waitForDatabase } from './wait-for-database.js';

interface ServiceLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface OpenDatabaseOptions {
  startTimeoutMs: number;
  description: string;
  logger: ServiceLogger;
}

/** Ready once reachable (up to DB_START_TIMEOUT) and migrated; closed after every service. */
export function openDatabase(db: Db, options: OpenDatabaseOptions): ServiceDependency {
  const { logger } = options;
  const ready = waitForDatabase(db, {
    timeoutMs: options.startTimeoutMs,
    description: options.description,
    logger,
  })
    .then(() => migrateLatest(db))
    .then((applied) => logger.info({ applied }, 'database ready'));
  return { ready, close: () => db.destroy() };
}
