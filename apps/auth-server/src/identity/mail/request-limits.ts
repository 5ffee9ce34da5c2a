import { createAttemptLimiter, type AttemptLimiter, type AttemptStore } from '@portcullis/accounts';

/**
 * Requests that mail someone (sign-up, forgotten password, resent verification, e-mail
 * change), counted per IP and per address whether or not the address has an account.
 */
export interface MailRequestLimiter {
  /** Counts the request; `retryAfter > 0`: refuse it (429) and send nothing. */
  begin(ip: string, email: string): ReturnType<AttemptLimiter<'ip' | 'address'>['begin']>;
}

export function createMailRequestLimiter(
  limits: { perAddress: number; perIp: number; windowSec: number },
  store: AttemptStore,
): MailRequestLimiter {
  // The IP first: an address over its limit does not use up the IP's count, nor the reverse.
  const limiter = createAttemptLimiter(
    {
      ip: { points: limits.perIp, durationSec: limits.windowSec, onSuccess: 'reward' },
      address: { points: limits.perAddress, durationSec: limits.windowSec, onSuccess: 'reward' },
    },
    store,
  );
  return {
    begin: (ip, email) => limiter.begin({ ip, address: email.trim().toLowerCase() }),
  };
}
