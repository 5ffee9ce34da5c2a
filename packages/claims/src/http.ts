import type { AuthenticationError } from './challenge.js';

/** The DPoP `htu` (RFC 9449 §4.3): `publicUrl` (behind a proxy) or the request's origin, plus the path. */
export function externalUrlOf(origin: string, rawPath: string, publicUrl?: string): string {
  const end = rawPath.search(/[?#]/);
  const path = end === -1 ? rawPath : rawPath.slice(0, end);
  return (publicUrl === undefined ? origin : publicUrl.replace(/\/+$/, '')) + path;
}

/** The answer of a refusal as headers and a JSON body; never cached (RFC 6750 §5.1). */
export function refusalOf(error: AuthenticationError): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  return {
    status: error.status,
    headers: {
      ...error.headers,
      'Cache-Control': 'no-store',
      'Content-Type': 'application/json; charset=utf-8',
    },
    body: JSON.stringify(error.body()),
  };
}
