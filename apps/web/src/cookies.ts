import type { Context } from 'koa';

/** Sealed (apps/web/README.md#how-tokens-are-held); by hand: Koa refuses Secure on plain HTTP. */
export const REFRESH_COOKIE = { name: 'rt', path: '/auth', sameSite: 'Strict' } as const;
export const PKCE_COOKIE = { name: 'pkce', path: '/callback', sameSite: 'Lax' } as const;
/** `signin`: the code, kept a minute until the page's first proof (apps/web/README.md#dpop). */
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
