import type { AuthenticationError } from './challenge.js';
import { resourceMetadataUrl, type ProtectedResourceMetadata } from './resource-metadata.js';
import type { Authenticator } from './resource-server.js';

/** The DPoP `htu` (RFC 9449 §4.3): `publicUrl` (behind a proxy) or the request's origin, plus the path. */
export function externalUrlOf(origin: string, rawPath: string, publicUrl?: string): string {
  return (publicUrl === undefined ? origin : publicUrl.replace(/\/+$/, '')) + pathOf(rawPath);
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

/** Where the adapters serve a server's RFC 9728 document (§3.1), and the document. */
export function metadataEndpointOf(server: Authenticator): {
  path: string;
  document: () => ProtectedResourceMetadata;
} {
  const { metadata } = server;
  if (!metadata) throw new TypeError('resource metadata needs createResourceServer({ metadata })');
  const document = metadata.bind(server);
  return { path: new URL(resourceMetadataUrl(document().resource)).pathname, document };
}

/** The request's path without its query, as the client sent it. */
export function pathOf(rawPath: string): string {
  const end = rawPath.search(/[?#]/);
  return end === -1 ? rawPath : rawPath.slice(0, end);
}

/** Public and cacheable: the document changes only with a new deployment. */
export const METADATA_HEADERS = {
  'Cache-Control': 'public, max-age=300',
  'Content-Type': 'application/json; charset=utf-8',
} as const;
