import type { AccountTokens } from '@portcullis/accounts';
import type { Context } from 'koa';
import type { Session } from 'oidc-provider';
import type { ProviderHost } from '../../oauth/provider-host.js';
import type { LogoutEverywhere } from '../../oauth/subject-logout.js';

export interface EndCredentialsOptions {
  /** The request of the user who made the change in this browser: its session stays signed in. */
  keep?: Context | undefined;
}

/**
 * What a change of credential or of who owns an account ends (docs/security.md "What a
 * recovery ends"): every door calls this, so the list lives here and nowhere else.
 */
export type EndCredentials = (userId: string, options?: EndCredentialsOptions) => Promise<void>;

export interface EndCredentialsDeps {
  host: Pick<ProviderHost, 'current'>;
  logoutEverywhere: LogoutEverywhere;
  accountTokens: Pick<AccountTokens, 'revoke'>;
}

export function createEndCredentials(deps: EndCredentialsDeps): EndCredentials {
  /**
   * This browser stays signed in: its session gets a new id, stored (issued) after the
   * cut-off, keeping its sign-in time; the grants it held are cut.
   */
  async function keepSignedIn(ctx: Context, session: Session): Promise<void> {
    const ttl = session.exp - Math.floor(Date.now() / 1000);
    if (!(ttl > 0)) return;
    const provider = deps.host.current;
    session.resetIdentifier();
    session.authorizations = {};
    await session.save(ttl);
    const { cookies } = provider.createContext(ctx.req, ctx.res);
    if (ctx.secure) cookies.secure = true;
    cookies.set(provider.cookieName('session'), session.jti, {
      httpOnly: true,
      sameSite: 'lax',
      signed: true,
      secure: ctx.secure,
      expires: new Date(session.exp * 1000),
    });
  }

  return async function endCredentials(userId, options = {}) {
    // Read before the cut-off: after it, the guard refuses this session too.
    const session = options.keep && (await deps.host.current.Session.get(options.keep));
    // Access and refresh tokens, codes, the auth server's sessions, and (through the deny
    // list) the API's `sid` sessions, on every instance within a poll.
    await deps.logoutEverywhere(userId);
    if (options.keep && session && session.accountId === userId)
      await keepSignedIn(options.keep, session);
    // Pending e-mail changes (and their cancel links), reset and verification links.
    await deps.accountTokens.revoke(userId);
  };
}
