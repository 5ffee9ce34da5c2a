import type { Db } from './create-db.js';
import { migrateLatest } from './migrate.js';

interface ServiceLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RunningService {
  url: string;
  close(): Promise<void>;
}

/**
 * The lifecycle every entry point shares: migrate, start each service, and on SIGINT or
 * SIGTERM close them (bounded by a 10 s grace period) and then the database, so that an
 * embedded PGlite is never left half-written.
 */
export async function runServices(
  logger: ServiceLogger,
  db: Db,
  starters: Record<string, () => Promise<RunningService>>,
): Promise<void> {
  const applied = await migrateLatest(db);
  logger.info({ applied }, 'database ready');
  const running: RunningService[] = [];
  const urls: Record<string, string> = {};
  for (const [name, start] of Object.entries(starters)) {
    const service = await start();
    running.push(service);
    urls[name] = service.url;
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
