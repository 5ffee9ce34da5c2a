import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSharedDenyList, createSharedRoles } from '@portcullis/db';
import {
  createHttpServer,
  drainOnClose,
  startingHandler,
  type ServerDrain,
} from '@portcullis/observability';
import { composeApi, type ApiDeps } from './app.js';
import { dpopReplayStoreFromConfig } from './auth/dpop.js';
import type { ApiConfig } from './config.js';
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
  const lifecycle: { drain?: ServerDrain } = {};
  const api = composeApi(config, {
    draining: () => lifecycle.drain?.draining ?? false,
    ...deps,
    denyList: deps.denyList ?? ownDenyList!,
    ...(ownRoles ? { roles: ownRoles } : {}),
    ...(ownLimiters ? { rateLimiters: ownLimiters } : {}),
    ...(ownDpopReplay ? { dpopReplay: ownDpopReplay } : {}),
  });
  handler = api.app.callback();
  lifecycle.drain = draining;
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      // Draining first, so /readyz fails at once; streams end at once with a last `retry:` frame.
      const drained = draining.close();
      await api.close();
      await drained;
      await ownDenyList?.close();
      await ownRoles?.close();
      await ownLimiters?.close();
      await ownDpopReplay?.close();
    },
  };
}
