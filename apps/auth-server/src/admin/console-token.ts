import type { AccountsRepo } from '@portcullis/accounts';
import { ADMIN_ROLE, CONSOLE_CLIENT_ID } from '../console/client.js';
import type { ProviderHost } from '../provider/provider-host.js';

/** The console's access token (opaque, ours): an administrator's, live, not disabled. */
export function consoleTokenCheck(host: ProviderHost, accounts: Pick<AccountsRepo, 'findById'>) {
  return async function checkConsoleToken(
    token: string,
  ): Promise<'admin' | 'forbidden' | 'invalid'> {
    // A JWT or anything longer is not one of ours: skip the lookup.
    if (token.length > 100 || token.includes('.')) return 'invalid';
    const found = await host.current.AccessToken.find(token);
    if (!found || found.isExpired || found.clientId !== CONSOLE_CLIENT_ID || !found.accountId) {
      return 'invalid';
    }
    const user = await accounts.findById(found.accountId);
    if (!user || user.disabledAt) return 'forbidden';
    return user.roles.includes(ADMIN_ROLE) ? 'admin' : 'forbidden';
  };
}
