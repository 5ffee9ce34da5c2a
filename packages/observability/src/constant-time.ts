import { timingSafeEqual } from 'node:crypto';

/** Equality in time independent of where they differ; anything but a string or bytes is unequal. */
export function constantTimeEqual(expected: string | Buffer, presented: unknown): boolean {
  if (typeof presented !== 'string' && !Buffer.isBuffer(presented)) return false;
  const a = Buffer.isBuffer(expected) ? expected : Buffer.from(expected);
  const b = Buffer.isBuffer(presented) ? presented : Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
