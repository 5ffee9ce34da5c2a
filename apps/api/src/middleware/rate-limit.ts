import type { Middleware } from 'koa';
import { sha256Hex } from '../auth/secrets.js';
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
    const credentialed = ctx.get('Authorization') !== '' || ctx.cookies.get('sid') !== undefined;
    if (!credentialed && !exempt.has(ctx.path)) {
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
 * Spec §5/§8: failed logins are limited per IP and per account. The attempt is counted
 * BEFORE the password is checked (so parallel guesses cannot all slip in between a check
 * and a count, and a blocked caller costs no argon2 work); a success takes it back: one
 * point for the IP, the whole consecutive-failure counter for the account. The account
 * key is a hash of the lower-cased email, so Redis holds no addresses.
 */
export async function beginLoginAttempt(
  limiters: Pick<RateLimiters, 'consume' | 'reward' | 'reset'>,
  ip: string,
  email: string,
): Promise<LoginAttempt> {
  const account = sha256Hex(email.trim().toLowerCase());
  await limiters.consume('loginIp', ip);
  await limiters.consume('loginAccount', account);
  return {
    async succeeded() {
      await limiters.reward('loginIp', ip);
      await limiters.reset('loginAccount', account);
    },
  };
}
