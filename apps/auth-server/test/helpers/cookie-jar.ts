interface Cookie {
  name: string;
  value: string;
  path: string;
}

/** Just enough of a browser cookie store for one host: name + path, Max-Age/Expires deletion. */
export class CookieJar {
  private readonly cookies = new Map<string, Cookie>();

  store(res: Response): void {
    for (const header of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = header.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = value === '';
      for (const attr of attrs) {
        const [k = '', v = ''] = attr.split('=');
        if (k.toLowerCase() === 'path') path = v;
        if (k.toLowerCase() === 'max-age' && Number(v) <= 0) expired = true;
        if (k.toLowerCase() === 'expires' && Date.parse(v) <= Date.now()) expired = true;
      }
      const key = `${name} ${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { name, value, path });
    }
  }

  header(url: string): string {
    const { pathname } = new URL(url);
    return [...this.cookies.values()]
      .filter(
        (c) =>
          pathname === c.path ||
          pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) ||
          c.path === '/',
      )
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  get(name: string): string | undefined {
    for (const c of this.cookies.values()) if (c.name === name) return c.value;
    return undefined;
  }
}

/** fetch with the jar and manual redirects, as a browser tab would send them. */
export function browser(jar = new CookieJar()) {
  async function request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = jar.header(url);
    if (cookie) headers.set('cookie', cookie);
    if (!headers.has('accept')) headers.set('accept', 'text/html');
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    jar.store(res);
    return res;
  }
  return {
    jar,
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
