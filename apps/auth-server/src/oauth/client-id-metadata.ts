import type { Client, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { AgentClientSettings } from '../kernel/agent-settings.js';
import { LOOPBACK_HOSTS } from './loopback.js';
import { assertSelfRegisteredMetadata, DYNAMIC_MARK } from './registration.js';

// OAuth Client ID Metadata Documents (README "Client ID Metadata Documents", docs/agents.md):
// oidc-provider fetches and checks the document; here is what Portcullis allows of it.

type Settings = AgentClientSettings['clientIdMetadata'];

const PUBLIC_GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);

/** A host in CLIENT_ID_METADATA_HOSTS: exact, or under a `*.` entry; an empty list allows any. */
export function hostAllowed(hosts: readonly string[], url: URL): boolean {
  if (hosts.length === 0) return true;
  const host = url.host.toLowerCase();
  return hosts.some((entry) =>
    entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry,
  );
}

/** Public clients only, with nothing an administrator alone may grant (the registration allow-list). */
function isPlainPublicClient(client: Client): boolean {
  const m = client.metadata() as Record<string, unknown>;
  assertSelfRegisteredMetadata(m);
  if (m['token_endpoint_auth_method'] !== 'none' || m[DYNAMIC_MARK] === true) return false;
  if (Array.isArray(m['roles']) && m['roles'].length > 0) return false;
  const grants = (m['grant_types'] as string[] | undefined) ?? ['authorization_code'];
  return grants.every((g) => PUBLIC_GRANT_TYPES.has(g));
}

/** features.clientIdMetadataDocument as CLIENT_ID_METADATA_* say. */
export function clientIdMetadataFeature(
  settings: Settings,
): NonNullable<Configuration['features']>['clientIdMetadataDocument'] {
  return {
    enabled: settings.enabled,
    ack: 'draft-02',
    async allowFetch(_ctx: KoaContextWithOIDC, clientId: string) {
      return hostAllowed(settings.hosts, new URL(clientId));
    },
    async allowClient(_ctx: KoaContextWithOIDC, client: Client) {
      return isPlainPublicClient(client);
    },
    // oidc-provider's default: the document's max-age or Expires, between 30 s and a day.
    cacheDuration: { min: 30, max: 86_400 },
  };
}

/**
 * oidc-provider's fetch. Its SSRF guard refuses special-use addresses; outside production a
 * loopback URL is fetched without it (a client document served by a test or a local agent).
 */
export function providerFetch(production: boolean): NonNullable<Configuration['fetch']> {
  return (url, options) => {
    const target = new URL(String(url));
    if (!production && LOOPBACK_HOSTS.has(target.hostname)) {
      const { dispatcher: _ssrfGuard, ...rest } = options as RequestInit & { dispatcher?: unknown };
      return fetch(url, rest);
    }
    return fetch(url, options);
  };
}

/** The host the consent page shows: a document's URL host, or a registered client's redirect host. */
export function clientHostOf(client: Client | undefined): string | undefined {
  if (!client) return undefined;
  const id = URL.parse(client.clientId);
  if (id?.protocol === 'https:') return id.host;
  const m = client.metadata() as Record<string, unknown>;
  if (m[DYNAMIC_MARK] !== true) return undefined;
  const redirect = Array.isArray(m['redirect_uris'])
    ? URL.parse(String(m['redirect_uris'][0]))
    : null;
  return redirect?.host;
}
