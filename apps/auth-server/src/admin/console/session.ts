import { hkdfSync, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { open, seal } from '../../kernel/sealed.js';

/** The console's cookies: both sealed (AES-256-GCM), HttpOnly, scoped to CONSOLE_PATH (docs/console.md). */
export const CONSOLE_SESSION_COOKIE = 'portcullis_console';
export const CONSOLE_LOGIN_COOKIE = 'portcullis_console_login';
/** A sign-in must come back from /authorize within this many seconds. */
const LOGIN_TTL_SECONDS = 600;

/** What the console keeps for a signed-in administrator; the browser holds it sealed only. */
export interface ConsoleSession {
  /** The console's access token: the admin API's credential for this administrator. */
  accessToken: string;
  sub: string;
  email: string;
  /** Unix seconds of the sign-in (the ID token's auth_time): step-up measures from it. */
  authTime: number;
  /** Unix seconds: the access token's expiry, and so the session's. */
  exp: number;
  /** Random per session: the forms' CSRF tokens are bound to it. */
  sid: string;
}

/** A sign-in on its way through /authorize. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  exp: number;
}

export interface ConsoleCookies {
  session(ctx: Context): ConsoleSession | undefined;
  setSession(ctx: Context, session: ConsoleSession): void;
  pending(ctx: Context): PendingSignIn | undefined;
  setPending(ctx: Context, pending: Omit<PendingSignIn, 'exp'>): void;
  clear(ctx: Context): void;
}

export const randomToken = () => randomBytes(32).toString('base64url');

export function createConsoleCookies(options: {
  keyEncryptionKey: Buffer;
  path: string;
  now?: () => number;
}): ConsoleCookies {
  const key = Buffer.from(
    hkdfSync('sha256', options.keyEncryptionKey, '', 'console cookie v1', 32),
  );
  const seconds = () => Math.floor((options.now ?? Date.now)() / 1000);
  // Secure whenever the request came over TLS (behind a proxy: TRUST_PROXY), as the other pages' cookies.
  const attributes = (ctx: Context, maxAge: number) => ({
    httpOnly: true,
    // The callback arrives by a top-level redirect from /authorize: Lax lets the cookie come along.
    sameSite: 'lax' as const,
    secure: ctx.secure,
    path: options.path,
    maxAge: maxAge * 1000,
    signed: false,
    overwrite: true,
  });

  function read<T extends { exp: number }>(ctx: Context, name: string): T | undefined {
    const value = ctx.cookies.get(name, { signed: false });
    if (!value) return undefined;
    try {
      const data = JSON.parse(open(key, name, value)) as T;
      return data.exp > seconds() ? data : undefined;
    } catch {
      return undefined;
    }
  }

  function write(ctx: Context, name: string, data: { exp: number }) {
    const maxAge = data.exp - seconds();
    ctx.cookies.set(name, seal(key, name, JSON.stringify(data)), attributes(ctx, maxAge));
  }

  return {
    session: (ctx) => read<ConsoleSession>(ctx, CONSOLE_SESSION_COOKIE),
    setSession: (ctx, session) => write(ctx, CONSOLE_SESSION_COOKIE, session),
    pending: (ctx) => read<PendingSignIn>(ctx, CONSOLE_LOGIN_COOKIE),
    setPending: (ctx, pending) =>
      write(ctx, CONSOLE_LOGIN_COOKIE, { ...pending, exp: seconds() + LOGIN_TTL_SECONDS }),
    clear(ctx) {
      for (const name of [CONSOLE_SESSION_COOKIE, CONSOLE_LOGIN_COOKIE])
        ctx.cookies.set(name, null, { path: options.path });
    },
  };
}
