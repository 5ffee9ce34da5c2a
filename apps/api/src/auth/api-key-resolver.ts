import type { AccountsRepo } from '@portcullis/accounts';
import {
  API_KEY_PREFIX,
  narrowPermissions,
  permissionsForRoles,
  resolveBearer,
  TokenError,
  type Principal,
  type PrincipalResolver,
  type RoleSource,
} from '@portcullis/claims';
import type { ApiKeysRepo } from '../data/api-keys-repo.js';
import type { RateLimiters } from '../rate-limits.js';

/** `sk_live_` + base64url of 32 random bytes; anything else is refused before any query. */
export const API_KEY_PATTERN = /^sk_live_[A-Za-z0-9_-]{43}$/;
const TOUCH_MS = 60_000;

export interface ApiKeyResolverDeps {
  apiKeys: Pick<ApiKeysRepo, 'findActiveByKey' | 'touch'>;
  accounts: Pick<AccountsRepo, 'findById'>;
  limiters: Pick<RateLimiters, 'consume'>;
  clock: () => Date;
  /** The roles' permissions on this API. */
  roles: RoleSource;
}

/** `Bearer sk_live_…` -> the owner's Principal (docs/security.md#api-keys-and-sessions-at-the-api). */
export function createApiKeyResolver(deps: ApiKeyResolverDeps): PrincipalResolver {
  return async function resolveApiKeyPrincipal(input) {
    const token = resolveBearer(input.authorization);
    if (token === undefined || !token.startsWith(API_KEY_PREFIX)) return undefined;
    if (!API_KEY_PATTERN.test(token)) throw new TokenError('token_malformed', 'malformed API key');
    const key = await deps.apiKeys.findActiveByKey(token);
    if (!key) throw new TokenError('token_revoked', 'unknown or revoked API key');
    if (!input.recheck) await deps.limiters.consume('apiKey', key.id, key.rateLimit);
    const owner = await deps.accounts.findById(key.ownerId);
    if (!owner) throw new TokenError('token_revoked', 'the API key owner no longer exists');
    const now = deps.clock();
    const staleBefore = new Date(now.getTime() - TOUCH_MS);
    if (key.lastUsedAt === null || key.lastUsedAt < staleBefore)
      await deps.apiKeys.touch(key.id, now, staleBefore);
    const principal: Principal = {
      subject: owner.id,
      kind: 'apiKey',
      roles: [],
      permissions: narrowPermissions(permissionsForRoles(owner.roles, deps.roles), key.permissions),
      scope: [...key.permissions],
      authMethod: 'apiKey',
      tokenId: key.id,
    };
    return principal;
  };
}
