import { createHash } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { PreconditionFailedError } from '../errors.js';

/** Conditional requests (RFC 9110 §13); strong ETags over the exact JSON representation. */
export function strongEtag(representation: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(representation)).digest('base64url');
  return `"${digest.slice(0, 32)}"`;
}

function tags(header: string): string[] {
  return header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** If-None-Match uses the weak comparison (§13.1.2): W/"x" matches "x". */
function noneMatchHits(header: string, etag: string): boolean {
  return tags(header).some((t) => t === '*' || t.replace(/^W\//, '') === etag);
}

/** If-Match uses the strong comparison (§13.1.1): weak tags never match. */
function matchHits(header: string, etag: string): boolean {
  return tags(header).some((t) => t === '*' || t === etag);
}

/** Vary plus Authorization and Cookie, memoised by the Vary before (it has few distinct values). */
const perCallerVary = new Map<string, string>();

function varyPerCaller(ctx: ParameterizedContext): void {
  const before = ctx.res.getHeader('Vary');
  const known = typeof before === 'string' ? perCallerVary.get(before) : undefined;
  if (known !== undefined) {
    ctx.res.setHeader('Vary', known);
    return;
  }
  ctx.vary('Authorization');
  ctx.vary('Cookie');
  const after = ctx.res.getHeader('Vary');
  if (typeof before === 'string' && typeof after === 'string' && perCallerVary.size < 16)
    perCallerVary.set(before, after);
}

/** Sends a resource with validator and cache headers, or 304; `etag` = strongEtag(representation). */
export function sendCacheable(
  ctx: ParameterizedContext,
  representation: unknown,
  etag: string = strongEtag(representation),
): void {
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', 'private, max-age=60, stale-while-revalidate=120');
  varyPerCaller(ctx);
  const ifNoneMatch = ctx.get('If-None-Match');
  if (ifNoneMatch && noneMatchHits(ifNoneMatch, etag)) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  ctx.body = representation;
}

/** True when the request carries If-Match; throws 412 when it does not match `current`. */
export function checkIfMatch(ctx: ParameterizedContext, current: unknown): boolean {
  const ifMatch = ctx.get('If-Match');
  if (!ifMatch) return false;
  if (!matchHits(ifMatch, strongEtag(current))) throw new PreconditionFailedError();
  return true;
}
