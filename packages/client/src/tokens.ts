// The token lives in this closure only, never in storage. Refreshes are single-flight: refresh tokens
// rotate and reuse revokes the grant, so concurrent 401s share one refresh.

/** How the client obtains and renews its bearer credential. */
export interface AuthOptions {
  /** Initial access token (or API key `sk_live_…`), kept in memory. */
  accessToken?: string;
  /** Consulted when no token is in memory, e.g. after a page reload. */
  getAccessToken?: () => string | undefined | Promise<string | undefined>;
  /** A fresh token after a 401; throw or return undefined when it cannot (then `onSignOut`). */
  refresh?: () => Promise<string | undefined>;
  /** Called once when a refresh fails: the user must sign in again. */
  onSignOut?: () => void | Promise<void>;
}

export type RefreshOutcome = { ok: true; token: string } | { ok: false; cause?: unknown };

export interface TokenManager {
  current(): Promise<string | undefined>;
  set(token: string | undefined): void;
  /** Resolves with a newer token, without refreshing, when another caller already replaced `rejected`. */
  refreshAfterRejection(rejected: string | undefined): Promise<RefreshOutcome>;
  readonly canRefresh: boolean;
}

export function createTokenManager(options: AuthOptions): TokenManager {
  let token = options.accessToken;
  let inflight: Promise<RefreshOutcome> | undefined;

  async function runRefresh(): Promise<RefreshOutcome> {
    let outcome: RefreshOutcome;
    try {
      const fresh = await options.refresh?.();
      outcome = fresh ? { ok: true, token: fresh } : { ok: false };
    } catch (cause) {
      outcome = { ok: false, cause };
    }
    if (outcome.ok) {
      token = outcome.token;
    } else {
      token = undefined;
      await options.onSignOut?.();
    }
    return outcome;
  }

  return {
    get canRefresh() {
      return options.refresh !== undefined;
    },
    async current() {
      if (token === undefined && options.getAccessToken) token = await options.getAccessToken();
      return token;
    },
    set(next) {
      token = next;
    },
    refreshAfterRejection(rejected) {
      if (inflight) return inflight;
      if (token !== undefined && token !== rejected) return Promise.resolve({ ok: true, token });
      inflight = runRefresh().finally(() => {
        inflight = undefined;
      });
      return inflight;
    },
  };
}
