export interface StoredCookie {
  name: string;
  value: string;
  path: string;
  /** The Set-Cookie header it came from, for tests of its attributes. */
  raw: string;
}

/** Keyed by name and path (browsers do not separate by port, nor does this). */
export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

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
        if (k.toLowerCase() === 'expires' && Date.parse(v) <= Date.now()) expired = true;
      }
      const key = `${name} ${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { name, value, path, raw });
    }
  }

  /** The Cookie header a browser would send to `url`, most specific path first. */
  header(url: string): string {
    const { pathname } = new URL(url);
    return [...this.cookies.values()]
      .filter(
        (c) =>
          c.path === '/' ||
          pathname === c.path ||
          pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`),
      )
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  get(name: string): string | undefined {
    return this.cookie(name)?.value;
  }

  /** The whole stored cookie `name` (any path), with its Set-Cookie header. */
  cookie(name: string): StoredCookie | undefined {
    for (const c of this.cookies.values()) if (c.name === name) return c;
    return undefined;
  }
}

export interface BrowserOptions {
  /** Accept header of requests that set none; default `text/html`, as a tab sends. */
  accept?: string | null;
  /** Sends the requests; default the global fetch (`fetchFrom(address)`: another machine). */
  fetch?: typeof fetch;
}

/** fetch with the jar and manual redirects, as a browser tab would send them. */
export function browser(jar = new CookieJar(), options: BrowserOptions = {}) {
  const accept = options.accept === undefined ? 'text/html' : options.accept;
  const send = options.fetch ?? fetch;
  async function request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = jar.header(url);
    if (cookie) headers.set('cookie', cookie);
    if (accept !== null && !headers.has('accept')) headers.set('accept', accept);
    const res = await send(url, { ...init, headers, redirect: 'manual' });
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
