import type { Middleware } from 'koa';
import type { PrincipalResolver } from '@portcullis/claims';
import type { SharedDenyList } from '@portcullis/db';
import type { ApiConfig } from '../config.js';
import type { Repos } from '../data/index.js';
import { allowedOrigins, originCheck } from '../middleware/origin-check.js';
import { limitAnonymousRequests } from '../middleware/rate-limit.js';
import type { RateLimiters } from '../rate-limits.js';
import { createApiKeyResolver } from './api-key-resolver.js';
import { createMixedCredentialsGuard, createSessionResolver } from './session-resolver.js';

/** What the session and API-key routes use besides repos. */
export interface CredentialServices {
  limiters: RateLimiters;
  /**
   * Logout-everywhere writes a `subject` row through the deny list (packages/claims), a
   * revoked API key or a logged-out session a `jti` row of its id (so other instances end
   * its streams at once).
   */
  revocations: Pick<SharedDenyList, 'denySubject' | 'denyToken'>;
}

/**
 * How long the deny list carries a revoked API key's or session's id: enough for every
 * running instance to read it (they poll every 250 ms) and end its event streams. The
 * credential itself stays revoked in its own table.
 */
export const REVOCATION_NOTICE_SEC = 3600;

/** Tells every instance, through the deny list, that the credential `id` was revoked just now. */
export function noticeOfRevocation(
  revocations: CredentialServices['revocations'],
  id: string,
  now: Date,
): Promise<void> {
  return revocations.denyToken(id, Math.floor(now.getTime() / 1000) + REVOCATION_NOTICE_SEC);
}

/** Resolvers that run before the JWT resolver: mixed-credential guard, API keys, sessions. */
export function credentialResolvers(
  config: ApiConfig,
  deps: {
    repos: Pick<Repos, 'accounts' | 'apiKeys' | 'sessions'>;
    limiters: RateLimiters;
    clock: () => Date;
  },
): PrincipalResolver[] {
  const { accounts, apiKeys, sessions } = deps.repos;
  return [
    createMixedCredentialsGuard(),
    createApiKeyResolver({ apiKeys, accounts, limiters: deps.limiters, clock: deps.clock }),
    createSessionResolver({
      sessions,
      accounts,
      clock: deps.clock,
      idleTimeoutSec: config.sessions.idleTimeoutSec,
    }),
  ];
}

/**
 * App-level guard, mounted after the error renderer and before body parsing and routes:
 * the origin check of cookie-authenticated writes, then the per-IP limit of requests
 * without any credential.
 */
export function credentialGuard(config: ApiConfig, limiters: RateLimiters): Middleware {
  const checkOrigin = originCheck({
    allowedOrigins: allowedOrigins(config),
    alwaysCheckedPaths: ['/login'],
  });
  const limitAnonymous = limitAnonymousRequests(limiters, {
    trustProxy: config.trustProxy,
    exemptPaths: ['/healthz', '/readyz', '/metrics'],
  });
  return async function guardCredentials(ctx, next) {
    await checkOrigin(ctx, () => limitAnonymous(ctx, next));
  };
}
