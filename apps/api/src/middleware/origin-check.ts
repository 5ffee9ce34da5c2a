import type { Middleware } from 'koa';
import { ForbiddenOriginError } from '../errors.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface OriginPolicy {
  /** Origins whose pages may send cookie-authenticated writes: the API's own + CORS origins. */
  allowedOrigins: readonly string[];
  /** Writes that must pass even without a session cookie (login CSRF: /login). */
  alwaysCheckedPaths: readonly string[];
}

/** CSRF defence in depth for cookie writes (docs/security.md#api-keys-and-sessions-at-the-api). */
export function originCheck(policy: OriginPolicy): Middleware {
  const allowed = new Set(policy.allowedOrigins);
  const alwaysChecked = new Set(policy.alwaysCheckedPaths);
  return async function checkOrigin(ctx, next) {
    if (SAFE_METHODS.has(ctx.method)) return next();
    const cookieAuth = ctx.cookies.get('sid') !== undefined;
    if (!cookieAuth && !alwaysChecked.has(ctx.path)) return next();
    const origin = ctx.get('Origin');
    const fetchSite = ctx.get('Sec-Fetch-Site');
    if (origin) {
      if (!allowed.has(origin)) throw new ForbiddenOriginError();
    } else if (cookieAuth ? fetchSite !== 'same-origin' : fetchSite === 'cross-site') {
      throw new ForbiddenOriginError();
    }
    return next();
  };
}

/** The API's own origin (from its public audience URL) plus the configured CORS origins. */
export function allowedOrigins(config: {
  audience: string;
  corsOrigins: readonly string[];
}): string[] {
  return [new URL(config.audience).origin, ...config.corsOrigins];
}
