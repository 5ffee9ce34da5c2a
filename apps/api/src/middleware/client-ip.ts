import type { Context } from 'koa';
import { isIP } from 'node:net';

function normalise(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const trimmed = address.trim();
  // IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d; count them once.
  const v4 = trimmed.startsWith('::ffff:') ? trimmed.slice(7) : trimmed;
  return isIP(v4) ? v4 : undefined;
}

/**
 * The address rate limits count against. X-Forwarded-For is read only when TRUST_PROXY
 * says a proxy we run sets it, and then its right-most entry: the one our proxy appended.
 * Entries to its left were written by the client and prove nothing (the left-most is what
 * Koa's ctx.ip would pick, and what an attacker rotates to dodge a per-IP limit).
 */
export function clientIp(ctx: Pick<Context, 'get' | 'req'>, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = ctx.get('X-Forwarded-For').split(',').at(-1);
    const hop = normalise(forwarded);
    if (hop) return hop;
  }
  return normalise(ctx.req.socket.remoteAddress) ?? 'unknown';
}
