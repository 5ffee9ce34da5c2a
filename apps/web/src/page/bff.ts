/** The page's side of the BFF; single-flight refreshes: a reused refresh token revokes the grant. */
import type { DpopKey } from '@portcullis/client';

export interface PageConfig {
  apiUrl: string;
  issuer: string;
  /** The `htu` of the proofs for the BFF's token requests. */
  tokenUrl: string;
}

export interface SignedInUser {
  sub: string;
  email?: string;
  name?: string;
}

export interface Session {
  accessToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  user: SignedInUser | undefined;
}

/** The BFF could not refresh for a reason other than the session ending (502, 5xx). */
export class SignInUnavailableError extends Error {
  override name = 'SignInUnavailableError';
}

const CSRF_HEADERS = { 'X-Requested-With': 'portcullis-web' };

export async function loadPageConfig(): Promise<PageConfig> {
  return (await (await fetch('/config.json', { cache: 'no-store' })).json()) as PageConfig;
}

export function createBffSession(config: PageConfig, key: DpopKey) {
  let refreshing: Promise<Session | undefined> | undefined;
  let user: SignedInUser | undefined;

  async function postRefresh(): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch('/auth/refresh', {
        method: 'POST',
        headers: { ...CSRF_HEADERS, DPoP: await key.proof('POST', config.tokenUrl) },
        credentials: 'same-origin',
        cache: 'no-store',
      });
      const newNonce = key.updateNonce(config.tokenUrl, res.headers);
      if (res.status === 400 && newNonce && attempt === 0) continue;
      return res;
    }
  }

  async function runRefresh(): Promise<Session | undefined> {
    const res = await postRefresh();
    if (res.status === 401) {
      user = undefined;
      return undefined;
    }
    if (!res.ok)
      throw new SignInUnavailableError(`The sign-in service is unavailable (${res.status}).`);
    const body = (await res.json()) as {
      access_token: string;
      expires_in: number;
      user?: SignedInUser;
    };
    user = body.user ?? user;
    return {
      accessToken: body.access_token,
      expiresAt: Date.now() + body.expires_in * 1000,
      user,
    };
  }

  return {
    refresh(): Promise<Session | undefined> {
      refreshing ??= runRefresh().finally(() => {
        refreshing = undefined;
      });
      return refreshing;
    },
    async signOut(): Promise<void> {
      user = undefined;
      await fetch('/auth/logout', {
        method: 'POST',
        headers: CSRF_HEADERS,
        credentials: 'same-origin',
      });
    },
  };
}

export type BffSession = ReturnType<typeof createBffSession>;
