import type { Middleware } from 'koa';
import { RateLimitedError } from '../errors.js';
import type { RateLimiters } from '../rate-limits.js';
import { clientIp } from './client-ip.js';

/**
 * Requests that present no credential at all are counted per client IP (probes and
 * scrapers); credentialed requests are limited by their own credential instead. Health
 * probes are exempt: a load balancer must not lock itself out.
 */
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
  /** The password was right: the attempt stops counting as a failure. */
  succeeded(): Promise<void>;
}

/**
 * Failed logins are limited per IP and per account by the sign-in limiter both apps share
 * (packages/accounts, LOGIN_*): counted before the password is checked, taken back by a
 * success. Throws RateLimitedError (429 + Retry-After) when refused.
 */
export async function beginLoginAttempt(
  limiters: Pick<RateLimiters, 'beginLogin'>,
  ip: string,
  email: string,
): Promise<LoginAttempt> {
  const attempt = await limiters.beginLogin(ip, email);
  if (attempt.retryAfter > 0) throw new RateLimitedError(attempt.retryAfter);
  return attempt;
}
