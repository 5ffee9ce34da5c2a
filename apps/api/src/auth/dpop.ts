import type { ParameterizedContext } from 'koa';
import {
  createDpopNonces,
  createDpopVerifier,
  createMemoryReplayStore,
  DPOP_ALGORITHMS,
  externalUrlOf,
  type DpopAlgorithm,
  type DpopReplayStore,
  type DpopRequest,
  type DpopVerifier,
} from '@portcullis/claims';
import type { ApiConfig } from '../config.js';
import { waitForRedis } from '@portcullis/accounts';
import { createRedisClient } from '../redis.js';

/** A replay store the server owns: Redis with REDIS_URL (shared by every instance), else memory. */
export interface OwnedReplayStore extends DpopReplayStore {
  readonly store: 'memory' | 'redis';
  ready(): Promise<void>;
  close(): Promise<void>;
}

const REDIS_TIMEOUT_MS = 1000;

/** The proof algorithms the API accepts, offered in its challenges and its RFC 9728 metadata. */
export const API_DPOP_ALGORITHMS: readonly DpopAlgorithm[] = DPOP_ALGORITHMS;

/** Proof `jti`s in Redis (`SET NX PX`), shared by every instance; Redis down: 503 (fail closed). */
export function dpopReplayStoreFromConfig(
  config: ApiConfig,
  options: { onStoreError?: (error: unknown) => void } = {},
): OwnedReplayStore {
  if (!config.redisUrl) {
    const memory = createMemoryReplayStore();
    return {
      store: 'memory',
      claim: (owner, id, ttlMs) => memory.claim(owner, id, ttlMs),
      ready: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
  }
  const client = createRedisClient(
    config.redisUrl,
    REDIS_TIMEOUT_MS,
    options.onStoreError ?? (() => undefined),
  );
  const prefix = `${config.redisKeyPrefix}dpop-jti:`;
  return {
    store: 'redis',
    async claim(owner, id, ttlMs) {
      const key = `${prefix}${owner}:${id}`;
      return (await client.set(key, '1', 'PX', Math.max(1, ttlMs), 'NX')) === 'OK';
    },
    ready: () => waitForRedis(client, REDIS_TIMEOUT_MS * 5),
    async close() {
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

/** The DPoP proof checks of the JWT resolver, configured from DPOP_* (docs/dpop.md). */
export function createApiDpopVerifier(
  config: ApiConfig,
  deps: { replay: DpopReplayStore; nonceSecret: () => Promise<Uint8Array>; now?: () => number },
): DpopVerifier {
  const now = deps.now ? { now: deps.now } : {};
  return createDpopVerifier({
    replay: deps.replay,
    nonces: config.dpop.nonce ? createDpopNonces({ secret: deps.nonceSecret, ...now }) : undefined,
    iatWindowSec: config.dpop.iatWindowSec,
    algorithms: API_DPOP_ALGORITHMS,
    ...now,
  });
}

/** The URL a DPoP proof must name in `htu`: PUBLIC_URL + path, else the request's own. */
export function externalUrl(ctx: ParameterizedContext, publicUrl: string | undefined): string {
  return externalUrlOf(`${ctx.protocol}://${ctx.host}`, ctx.originalUrl, publicUrl);
}

/** The request's DPoP proofs and target, as packages/claims reads them. */
export function dpopRequestOf(
  ctx: ParameterizedContext,
  publicUrl: string | undefined,
): DpopRequest {
  // Node joins a repeated DPoP header with ", ", which the verifier refuses as two proofs.
  const proof = ctx.req.headers['dpop'];
  return {
    proofs: typeof proof === 'string' ? [proof] : [],
    method: ctx.method,
    url: externalUrl(ctx, publicUrl),
    request: ctx.req,
  };
}
