import { isDatabaseUnavailable } from '@portcullis/db';
import type { Context, Middleware } from 'koa';
import { AuthServerError } from './errors.js';

/** Seconds a client waits before retrying while a dependency is down. */
export const RETRY_AFTER_SECONDS = '5';

/** A store authentication depends on did not answer: fail closed with 503. */
export class DependencyUnavailableError extends AuthServerError {
  constructor(dependency: string, cause: unknown) {
    super(`${dependency} unavailable`, { status: 503, expose: true, cause });
  }
}

/** The database or a store is down: the request may succeed later, unchanged. */
export function isUnavailable(error: unknown): boolean {
  return error instanceof DependencyUnavailableError || isDatabaseUnavailable(error);
}

const MARK = Symbol('dependency unavailable');

/** Marks a context whose oidc-provider 500 came from an outage, for unavailableAs503. */
export function markUnavailable(ctx: Context): void {
  (ctx.state as Record<symbol, boolean>)[MARK] = true;
}

function respond503(ctx: Context): void {
  ctx.status = 503;
  ctx.set('Retry-After', RETRY_AFTER_SECONDS);
  ctx.set('Cache-Control', 'no-store');
  const body = ctx.body as { error?: unknown } | null | undefined;
  // JSON answers get the OAuth error shape; HTML pages keep their (generic) text.
  if (body == null || (typeof body === 'object' && 'error' in body)) {
    ctx.body = {
      error: 'temporarily_unavailable',
      error_description: 'the service is temporarily unavailable; retry later',
    };
  }
}

/** Outermost error mapping of the auth server: dependency outages answer 503 + Retry-After. */
export const unavailableAs503: Middleware = async function unavailableAs503(ctx, next) {
  try {
    await next();
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    ctx.body = null;
    respond503(ctx);
    return;
  }
  if ((ctx.state as Record<symbol, boolean>)[MARK] && ctx.status === 500) respond503(ctx);
};
