import type { Context, Middleware } from 'koa';

// PostgreSQL refuses U+0000 in text and jsonb; no field needs one, so it is refused at the edge.
const NUL = '\u0000';

/** Iterative: a parsed JSON body may nest deeper than the call stack. */
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

/** Mount after the body parser; raw bodies it skipped (uploads) are not looked at. */
export function refuseNul(options: RefuseNulOptions): Middleware {
  return async function nulRefuser(ctx, next) {
    // The HTTP parser refuses a raw NUL in the request line, so only an escape (%00) can bring one.
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
