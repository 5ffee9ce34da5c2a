import type { Context, Middleware } from 'koa';

/**
 * PostgreSQL refuses U+0000 in text and jsonb, so a NUL that reached a query would fail it
 * with a 500. No field of either app has a use for one: both refuse it at the edge as
 * invalid input (README "Bad input").
 */
const NUL = '\u0000';

/**
 * True when a string, or any key or string inside arrays and objects, holds a NUL.
 * Iterative: a parsed JSON body may nest deeper than the call stack.
 */
export function containsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (next.includes(NUL)) return true;
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
    } else if (typeof next === 'object' && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (key.includes(NUL)) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

/** The path as routers decode it (a malformed escape stays as it is, as they leave it). */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export interface RefuseNulOptions {
  /** Throws (or renders) the app's own 400; called instead of `next`. */
  refuse(ctx: Context): void | Promise<void>;
}

/**
 * Refuses a request whose decoded path, query or parsed body (`ctx.request.body`, so mount
 * it after the body parser) holds a NUL. Raw bodies the parser skipped (file uploads,
 * which may hold any byte) are not looked at.
 */
export function refuseNul(options: RefuseNulOptions): Middleware {
  return async function nulRefuser(ctx, next) {
    // The HTTP parser refuses a raw NUL in the request line, so only an escape (%00) can
    // bring one into the path or the query: most requests have neither to look at.
    const path = ctx.path;
    if (
      (path.includes('%') && decodedPath(path).includes(NUL)) ||
      (ctx.querystring !== '' && containsNul(ctx.query)) ||
      containsNul((ctx.request as { body?: unknown }).body)
    ) {
      await options.refuse(ctx);
      return;
    }
    await next();
  };
}
