import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSharedDenyList, createSharedRoles, type SharedDenyList } from '@portcullis/db';
import {
  createHttpServer,
  drainOnClose,
  startingHandler,
  type ServerDrain,
} from '@portcullis/observability';
import { createApiApp, type ApiDeps } from './app.js';
import { dpopReplayStoreFromConfig } from './auth/dpop.js';
import type { ApiConfig } from './config.js';
import { createEventsRepo } from './data/events-repo.js';
import { createSessionsRepo } from './data/sessions-repo.js';
import { createEventBus } from './events/bus.js';
import { rateLimitersFromConfig } from './rate-limits.js';

export interface RunningApiServer {
  url: string;
  close(): Promise<void>;
}

/** Listens at once: /healthz, and 503 elsewhere until the database is ready and the app built. */
export async function startApiServer(
  config: ApiConfig,
  deps: Omit<ApiDeps, 'denyList'> & Partial<Pick<ApiDeps, 'denyList'>>,
  database: Promise<unknown> = Promise.resolve(),
): Promise<RunningApiServer> {
  let handler: RequestListener = startingHandler;
  const server = createHttpServer((req, res) => handler(req, res), deps.logger);
  await new Promise<void>((resolve) => server.listen(config.port, resolve));
  const draining = drainOnClose(server);
  await database;
  // The deny list is loaded before the first request, so no revoked token slips through at start.
  const ownDenyList = deps.denyList
    ? undefined
    : createSharedDenyList({
        db: deps.db,
        onError: (err) => deps.logger.error({ err }, 'deny list poll failed'),
      });
  await ownDenyList?.start();
  // The roles' permissions likewise, then polled: a role edited anywhere applies within seconds.
  const ownRoles = deps.roles
    ? undefined
    : createSharedRoles({
        db: deps.db,
        onError: (err) => deps.logger.error({ err }, 'roles poll failed'),
      });
  await ownRoles?.start();
  // Unreachable Redis at start is logged; authentication answers 503 (fail closed) until back.
  const ownLimiters = deps.rateLimiters
    ? undefined
    : rateLimitersFromConfig(config, {
        onStoreError: (err) => deps.logger.warn({ err }, 'rate-limit store error'),
      });
  await ownLimiters
    ?.ready()
    .catch((err: unknown) => deps.logger.error({ err }, 'rate-limit store unreachable'));
  // Proof jtis in Redis with REDIS_URL (fails closed while it is down, like the limits).
  const ownDpopReplay = deps.dpopReplay
    ? undefined
    : dpopReplayStoreFromConfig(config, {
        onStoreError: (err) => deps.logger.warn({ err }, 'DPoP replay store error'),
      });
  await ownDpopReplay
    ?.ready()
    .catch((err: unknown) => deps.logger.error({ err }, 'DPoP replay store unreachable'));
  // Open event streams end when the bus closes, so closing the server does not wait on them.
  const ownEventBus = deps.eventBus
    ? undefined
    : createEventBus({
        events: createEventsRepo(deps.db),
        pollMs: config.streams.pollMs,
        onError: (err) => deps.logger.error({ err }, 'event poll failed'),
      });
  const denyList = deps.denyList ?? ownDenyList!;
  const stopEndingSessions = endSessionsOnSubjectRevocation(denyList, deps);
  const lifecycle: { drain?: ServerDrain } = {};
  const app = createApiApp(config, {
    draining: () => lifecycle.drain?.draining ?? false,
    ...deps,
    denyList,
    ...(ownRoles ? { roles: ownRoles } : {}),
    ...(ownEventBus ? { eventBus: ownEventBus } : {}),
    ...(ownLimiters ? { rateLimiters: ownLimiters } : {}),
    ...(ownDpopReplay ? { dpopReplay: ownDpopReplay } : {}),
  });
  handler = app.callback();
  lifecycle.drain = draining;
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      // Draining first, so /readyz fails at once; streams end at once with a last `retry:` frame.
      const drained = draining.close();
      stopEndingSessions?.();
      await ownEventBus?.close();
      await drained;
      await ownDenyList?.close();
      await ownRoles?.close();
      await ownLimiters?.close();
      await ownDpopReplay?.close();
    },
  };
}

/**
 * A `subject` revocation learnt (by the poll, or in this process before its row is even written)
 * marks the user's `sid` sessions begun before it as ended, read from the deny list in memory.
 * The session resolver refuses them anyway; this keeps `revoked_at` true for lists and purges.
 */
function endSessionsOnSubjectRevocation(
  denyList: Pick<SharedDenyList, 'isDenied'> & Partial<Pick<SharedDenyList, 'onRevocation'>>,
  deps: Pick<ApiDeps, 'db' | 'logger'> & { now?: (() => number) | undefined },
): (() => void) | undefined {
  const sessions = createSessionsRepo(deps.db);
  const now = deps.now ?? Date.now;
  return denyList.onRevocation?.((revocation) => {
    if (revocation.kind !== 'subject') return;
    const sub = revocation.value;
    sessions
      .revokeWhere(
        sub,
        (at) => denyList.isDenied({ sub, iat: at.getTime() / 1000 }),
        new Date(now()),
      )
      .catch((err: unknown) => deps.logger.error({ err }, 'ending sessions of a revoked subject'));
  });
}
