import type { Middleware } from 'koa';
import type { DenyList, PrincipalResolver, RoleSource } from '@portcullis/claims';
import type { SharedDenyList } from '@portcullis/db';
import type { ApiConfig } from '../config.js';
import type { Repos } from '../data/index.js';
import { allowedOrigins, originCheck } from '../middleware/origin-check.js';
import { limitAnonymousRequests } from '../middleware/rate-limit.js';
import type { RateLimiters } from '../rate-limits.js';
import { createApiKeyResolver } from './api-key-resolver.js';
import { createMixedCredentialsGuard, createSessionResolver } from './session-resolver.js';

export interface CredentialServices {
  limiters: RateLimiters;
  /** Writes revocations through the deny list, so other instances end streams at once. */
  revocations: Pick<SharedDenyList, 'denySubject' | 'denyToken'>;
}

/** How long the deny list carries a revoked key's or session's id: enough for every poll. */
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
    roles: RoleSource;
    denyList: Pick<DenyList, 'isDenied'>;
  },
): PrincipalResolver[] {
  const { accounts, apiKeys, sessions } = deps.repos;
  const { limiters, clock, roles, denyList } = deps;
  return [
    createMixedCredentialsGuard(),
    createApiKeyResolver({ apiKeys, accounts, limiters, clock, roles }),
    createSessionResolver({
      sessions,
      accounts,
      clock,
      roles,
      denyList,
      idleTimeoutSec: config.sessions.idleTimeoutSec,
    }),
  ];
}

/** After the error renderer: origin check of cookie writes, then the anonymous per-IP limit. */
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
