/**
 * Just enough of a browser for HTTP-level tests of the BFF: one cookie store keyed by
 * name and path (browsers do not separate cookies by port, and neither does this),
 * manual redirects, and the form posts of the authorization server's pages.
 */
export class CookieJar {
  readonly cookies = new Map<string, { name: string; value: string; path: string; raw: string }>();

  store(res: Response): void {
    for (const raw of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = raw.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = value === '';
      for (const attr of attrs) {
        const [k = '', v = ''] = attr.split('=');
        if (k.toLowerCase() === 'path') path = v;
        if (k.toLowerCase() === 'max-age' && Number(v) <= 0) expired = true;
      }
      const key = `${name} ${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { name, value, path, raw });
    }
  }

  header(url: string): string {
    const { pathname } = new URL(url);
    return [...this.cookies.values()]
      .filter((c) => c.path === '/' || pathname === c.path || pathname.startsWith(`${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  get(name: string) {
    for (const c of this.cookies.values()) if (c.name === name) return c;
    return undefined;
  }
}

export function browser(jar = new CookieJar()) {
  async function request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = jar.header(url);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    jar.store(res);
    return res;
  }
  return {
    jar,
    request,
    get: (url: string) => request(url),
    postForm: (url: string, form: Record<string, string>) =>
      request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      }),
  };
}
export type Browser = ReturnType<typeof browser>;

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/**
 * From `start` (the BFF's /auth/login) through the authorization server's login and
 * consent pages to the BFF's /callback; returns the URL of the first response that is
 * not a redirect to the authorization server (normally the SPA at `/`).
 */
export async function signInThroughPages(
  b: Browser,
  start: string,
  user: { email: string; password: string },
  stopAt?: (url: URL) => boolean,
): Promise<URL> {
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (stopAt?.(new URL(url))) return new URL(url);
    const res = await b.get(url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    const here = new URL(url);
    let post: Response;
    if (html.includes('name="password"')) {
      post = await b.postForm(`${here.origin}${here.pathname}/login`, {
        csrf: csrfOf(html),
        email: user.email,
        password: user.password,
      });
    } else if (html.includes('/confirm"')) {
      post = await b.postForm(`${here.origin}${here.pathname}/confirm`, { csrf: csrfOf(html) });
    } else {
      return here;
    }
    if (post.status !== 303)
      throw new Error(`form POST answered ${post.status}: ${(await post.text()).slice(0, 300)}`);
    url = new URL(post.headers.get('location')!, url).href;
  }
  throw new Error('too many redirects');
}
