import { request as httpRequest } from 'node:http';
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

// Below Linux's ephemeral range: a `listen(0)` port could be taken by a test's own client first.
const PORT_RANGE = { from: 20_000, to: 32_000 };
const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Random in PORT_RANGE, never twice in one process, free when returned. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = PORT_RANGE.from + randomInt(PORT_RANGE.to - PORT_RANGE.from);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.from}-${PORT_RANGE.to} after 100 tries`);
}

/** Leaves from `localAddress` (127.0.0.x), so a server not trusting X-Forwarded-For sees another machine. */
export function fetchFrom(localAddress: string): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init.headers);
    let body: string | undefined;
    if (init.body instanceof URLSearchParams) {
      body = init.body.toString();
      if (!headers.has('content-type')) {
        headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
      }
    } else if (typeof init.body === 'string') {
      body = init.body;
    } else if (init.body != null) {
      throw new TypeError('fetchFrom sends string or URLSearchParams bodies only');
    }
    return new Promise<Response>((resolve, reject) => {
      const req = httpRequest(
        url,
        {
          method: init.method ?? 'GET',
          headers: Object.fromEntries(headers),
          localAddress,
          signal: init.signal ?? undefined,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const out = new Headers();
            for (let i = 0; i < res.rawHeaders.length; i += 2) {
              out.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
            }
            const status = res.statusCode ?? 500;
            const empty = status === 204 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers: out }));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}
