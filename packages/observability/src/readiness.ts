import type { Context } from 'koa';

/** A dependency probe: resolves when the dependency answered. */
export type ReadinessProbe = () => PromiseLike<unknown>;

export interface ReadinessReport {
  ready: boolean;
  /** `{ status: 'ready', database: 'ok' }` or `{ status: 'unavailable', redis: 'unreachable', … }`. */
  body: Record<string, string>;
}

const DEFAULT_TIMEOUT_MS = 1000;

function withTimeout(probe: ReadinessProbe, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([Promise.resolve().then(probe), timeout]).finally(() => clearTimeout(timer));
}

/** Probes in parallel, each bounded by `timeoutMs` (default 1 s); not ready once draining. */
export function createReadinessCheck(
  probes: Record<string, ReadinessProbe | undefined>,
  options: {
    timeoutMs?: number;
    draining?: () => boolean;
    onFailure?: (name: string, error: unknown) => void;
  } = {},
): () => Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const named = Object.entries(probes).filter(
    (entry): entry is [string, ReadinessProbe] => entry[1] !== undefined,
  );
  return async function checkReadiness() {
    const results = await Promise.all(
      named.map(async ([name, probe]) => {
        try {
          await withTimeout(probe, timeoutMs);
          return [name, 'ok'] as const;
        } catch (error) {
          options.onFailure?.(name, error);
          return [name, 'unreachable'] as const;
        }
      }),
    );
    const draining = options.draining?.() ?? false;
    const ready = !draining && results.every(([, state]) => state === 'ok');
    const status = draining ? 'shutting_down' : ready ? 'ready' : 'unavailable';
    return { ready, body: { status, ...Object.fromEntries(results) } };
  };
}

/** Seconds a client waits before probing again after a 503 from /readyz. */
export const READINESS_RETRY_AFTER = '5';

/** GET /readyz: 200 with the report, or 503 with Retry-After naming what is down. */
export function readinessEndpoint(
  check: () => Promise<ReadinessReport>,
): (ctx: Context) => Promise<void> {
  return async function readiness(ctx) {
    const report = await check();
    ctx.set('Cache-Control', 'no-store');
    if (!report.ready) {
      ctx.status = 503;
      ctx.set('Retry-After', READINESS_RETRY_AFTER);
    }
    ctx.body = report.body;
  };
}
