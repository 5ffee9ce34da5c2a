import { Redis } from 'ioredis';

/** A run's own keys on a Redis that other runs share. */
export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const client = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
