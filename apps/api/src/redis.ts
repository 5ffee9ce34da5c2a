import { Redis } from 'ioredis';

/** A Redis client that fails commands at once while disconnected (fail closed): rate limits and DPoP replay. */
export function createRedisClient(
  url: string,
  timeoutMs: number,
  onError: (error: unknown) => void,
): Redis {
  const client = new Redis(url, {
    // Commands fail at once while disconnected instead of queueing behind a dead link.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    disconnectTimeout: timeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  client.on('error', onError);
  return client;
}
