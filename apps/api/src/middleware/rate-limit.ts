import type { Middleware } from 'koa';
import { RateLimitedError } from '../errors.js';
import type { RateLimiters } from '../rate-limits.js';
import { clientIp } from './client-ip.js';

/** Requests with no credential are limited per IP; health probes are exempt. */
export function limitAnonymousRequests(
  limiters: Pick<RateLimiters, 'consume'>,
  options: { trustProxy: boolean; exemptPaths: readonly string[] },
): Middleware {
  const exempt = new Set(options.exemptPaths);
  return async function limitAnonymous(ctx, next) {
    if (exempt.has(ctx.path)) return next();
    const credentialed = ctx.get('Authorization') !== '' || ctx.cookies.get('sid') !== undefined;
    if (!credentialed) {
      await limiters.consume('anonymous', clientIp(ctx, options.trustProxy));
    }
    await next();
  };
}

export interface LoginAttempt {
  succeeded(): Promise<void>;
}

/** Failed logins limited per IP and per account, counted before the password check. */
export async function beginLoginAttempt(
  limiters: Pick<RateLimiters, 'beginLogin'>,
  ip: string,
  email: string,
): Promise<LoginAttempt> {
  const attempt = await limiters.beginLogin(ip, email);
  if (attempt.retryAfter > 0) throw new RateLimitedError(attempt.retryAfter);
  return attempt;
}
