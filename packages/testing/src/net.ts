import { request as httpRequest } from 'node:http';
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * Ports handed out by freePort come from below Linux's ephemeral range (32768-60999), which
 * outgoing connections draw their local ports from: a port the kernel picked with
 * `listen(0)` could be taken by one of the test's own client connections before the server
 * it was meant for binds it (EADDRINUSE, seen in CI under 100 concurrent requests).
 */
const PORT_RANGE = { from: 20_000, to: 32_000 };
const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A free TCP port, for servers whose URL must be known before they start: random in
 * PORT_RANGE (so that test processes running side by side rarely meet), never the same
 * twice in one process, and nothing listening on it when it is returned.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = PORT_RANGE.from + randomInt(PORT_RANGE.to - PORT_RANGE.from);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.from}-${PORT_RANGE.to} after 100 tries`);
}

/**
 * A fetch whose requests leave from `localAddress` (127.0.0.2, 127.0.0.3, …: all loopback on
 * Linux), so a server that does not trust X-Forwarded-For sees a second client machine.
 * Enough of fetch for form and JSON requests, openid-client's `customFetch` included.
 */
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
