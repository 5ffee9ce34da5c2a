import type { AccountsRepo } from '@portcullis/accounts';
import type { Account, FindAccount } from 'oidc-provider';

/** oidc-provider's view of a user: `sub` is the user id; claims filtered by granted scope. */
export function createFindAccount(accounts: AccountsRepo): FindAccount {
  return async function findAccount(_ctx, sub): Promise<Account | undefined> {
    const user = await accounts.findById(sub);
    if (!user) return undefined;
    return {
      accountId: user.id,
      claims: () => ({
        sub: user.id,
        email: user.email,
        // Proven by a mailed link, or asserted by the administrator who made the account.
        email_verified: user.emailVerifiedAt !== null,
        name: user.name ?? undefined,
      }),
    };
  };
}
