import type { Context } from 'koa';

/**
 * The BFF's cookies, all sealed (sealed-cookie.ts), HttpOnly and Secure (browsers
 * treat http://localhost as a secure context, so Secure works in development too):
 *
 * - `rt`: the refresh token. SameSite=Strict and Path=/auth: only the SPA's own
 *   same-site fetches to /auth/refresh and /auth/logout carry it (docs/security.md: browser tokens).
 * - `pkce`: verifier, state and nonce of one sign-in, for ten minutes. SameSite=Lax and
 *   Path=/callback: the authorization server's redirect to /callback is a cross-site
 *   top-level navigation when the two run on different sites, which Strict would strip.
 *
 * Written by hand: Koa's cookie jar refuses a Secure cookie on a plain-HTTP hop, which is
 * what local development and a TLS-terminating proxy look like.
 */
export const REFRESH_COOKIE = { name: 'rt', path: '/auth', sameSite: 'Strict' } as const;
export const PKCE_COOKIE = { name: 'pkce', path: '/callback', sameSite: 'Lax' } as const;
/**
 * `signin`: the authorization code of a finished sign-in with its verifier and nonce, for
 * one minute, until the page's first POST /auth/refresh brings the DPoP proof the code
 * exchange needs (README "DPoP", "In the client SDK and the browser demo"). Strict and Path=/auth, as `rt`.
 */
export const SIGNIN_COOKIE = { name: 'signin', path: '/auth', sameSite: 'Strict' } as const;

type CookieSpec = typeof REFRESH_COOKIE | typeof PKCE_COOKIE | typeof SIGNIN_COOKIE;

export function setCookie(
  ctx: Context,
  spec: CookieSpec,
  value: string,
  maxAgeSeconds: number,
): void {
  ctx.append(
    'Set-Cookie',
    `${spec.name}=${value}; Path=${spec.path}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=${spec.sameSite}`,
  );
}

export function clearCookie(ctx: Context, spec: CookieSpec): void {
  ctx.append(
    'Set-Cookie',
    `${spec.name}=; Path=${spec.path}; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=${spec.sameSite}`,
  );
}
