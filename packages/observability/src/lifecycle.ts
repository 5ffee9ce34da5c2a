// Configuration, start and ordered shutdown shared by every entry point (README "Operating it").
import { installLastResortGuard } from './request-guard.js';

interface LifecycleLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  fatal(obj: object, msg?: string): void;
}

/** Every problem of a configuration, each naming its variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/** An error that ends startup with a message for the operator and a sysexits(3) code. */
export class StartupError extends Error {
  override name = 'StartupError';
  constructor(
    message: string,
    readonly exitCode: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** EX_CONFIG (sysexits(3)): the configuration is wrong. */
export const EX_CONFIG = 78;

/** EX_SOFTWARE (sysexits(3)): an internal error; here, errors kept escaping every handler. */
export const EX_SOFTWARE = 70;

/** A ConfigError is printed without a stack and exits EX_CONFIG; anything else is rethrown. */
export function exitOnConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return process.exit(EX_CONFIG);
  }
}

export interface RunningService {
  url: string;
  close(): Promise<void>;
}

/** May listen at once (/healthz, 503 elsewhere) but must await `ready` before using the dependency. */
export type ServiceStarter = (ready: Promise<void>) => Promise<RunningService>;

/** What the services share and need before serving (the database): closed after them. */
export interface ServiceDependency {
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Services get this long to close; then the process exits: 1 after a signal, else its code. */
export const SHUTDOWN_GRACE_MS = 10_000;

function failStartup(logger: LifecycleLogger, error: unknown): never {
  if (error instanceof StartupError) {
    logger.error({ exitCode: error.exitCode }, error.message);
    return process.exit(error.exitCode);
  }
  logger.error({ err: error }, 'startup failed');
  return process.exit(1);
}

/** Starts the services; on a signal or repeated escaped errors closes them, then the dependency. */
export async function runServices(
  logger: LifecycleLogger,
  starters: Record<string, ServiceStarter>,
  dependency?: ServiceDependency,
): Promise<void> {
  const ready = dependency?.ready ?? Promise.resolve();
  // Each service awaits `ready` itself; this only keeps an early failure handled.
  ready.catch(() => undefined);
  const running: RunningService[] = [];
  const urls: Record<string, string> = {};
  try {
    const started = await Promise.all(
      Object.entries(starters).map(async ([name, start]) => [name, await start(ready)] as const),
    );
    for (const [name, service] of started) {
      running.push(service);
      urls[name] = service.url;
    }
  } catch (error) {
    failStartup(logger, error);
  }
  logger.info(urls, 'Portcullis is up');

  let stopping = false;
  const shutdown = async (reason: object, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info(reason, 'shutting down');
    setTimeout(() => process.exit(exitCode || 1), SHUTDOWN_GRACE_MS).unref();
    const results = await Promise.allSettled(running.map((s) => s.close()));
    for (const r of results)
      if (r.status === 'rejected') logger.error({ err: r.reason }, 'close failed');
    await dependency?.close();
    logger.info({ exitCode }, 'stopped');
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void shutdown({ signal: 'SIGINT' }, 0));
  process.once('SIGTERM', () => void shutdown({ signal: 'SIGTERM' }, 0));
  installLastResortGuard(logger, () => void shutdown({ reason: 'escaped errors' }, EX_SOFTWARE));
}
