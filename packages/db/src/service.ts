import type { Db } from './create-db.js';
import { migrateLatest } from './migrate.js';
import { StartupError, waitForDatabase } from './wait-for-database.js';

interface ServiceLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RunningService {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts one service. It may listen at once (answering /healthz, and 503 elsewhere) but
 * must await `database` (reachable and migrated) before it touches the database.
 */
export type ServiceStarter = (database: Promise<void>) => Promise<RunningService>;

export interface StartOptions {
  /** DB_START_TIMEOUT in ms: how long an unreachable PostgreSQL is waited for. */
  startTimeoutMs: number;
  /** Where the database is, for the log (describeDb). */
  description: string;
}

/** Logs why startup failed and exits: a StartupError's own code and message, else 1. */
function failStartup(logger: ServiceLogger, error: unknown): never {
  if (error instanceof StartupError) {
    logger.error({ exitCode: error.exitCode }, error.message);
    process.exit(error.exitCode);
  }
  logger.error({ err: error }, 'startup failed');
  process.exit(1);
}

async function startAll(
  logger: ServiceLogger,
  db: Db,
  starters: Record<string, ServiceStarter>,
  options: StartOptions,
): Promise<Array<[string, RunningService]>> {
  const database = waitForDatabase(db, {
    timeoutMs: options.startTimeoutMs,
    description: options.description,
    logger,
  })
    .then(() => migrateLatest(db))
    .then((applied) => logger.info({ applied }, 'database ready'));
  // Each service awaits `database` itself; this only keeps an early failure handled.
  database.catch(() => undefined);
  return Promise.all(
    Object.entries(starters).map(async ([name, start]): Promise<[string, RunningService]> => [
      name,
      await start(database),
    ]),
  );
}

/**
 * The lifecycle every entry point shares: wait for the database (DB_START_TIMEOUT) and
 * migrate while the services already answer /healthz, start each service, and on SIGINT
 * or SIGTERM close them (bounded by a 10 s grace period) and then the database, so that
 * an embedded PGlite is never left half-written. A failed start exits with a message.
 */
export async function runServices(
  logger: ServiceLogger,
  db: Db,
  starters: Record<string, ServiceStarter>,
  options: StartOptions,
): Promise<void> {
  const running: RunningService[] = [];
  const urls: Record<string, string> = {};
  try {
    for (const [name, service] of await startAll(logger, db, starters, options)) {
      running.push(service);
      urls[name] = service.url;
    }
  } catch (error) {
    failStartup(logger, error);
  }
  logger.info(urls, 'Portcullis is up');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), 10_000).unref();
    const results = await Promise.allSettled(running.map((s) => s.close()));
    for (const r of results)
      if (r.status === 'rejected') logger.error({ err: r.reason }, 'close failed');
    await db.destroy();
    logger.info({}, 'stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

/** Prints a configuration error and exits with EX_CONFIG (78). */
export function exitOnConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(78);
  }
}
