import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { AuthServerHandle, JsonBody } from './server-handle.js';

/** The demo SPA's registered redirect URI, which the test clients register too. */
export const REDIRECT_URI = 'http://localhost:5173/callback';

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(seq++).toString(36)}`;

export async function createUser(t: AuthServerHandle, roles: string[] = ['editor']) {
  const email = `${unique('user')}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await t.admin('POST', '/admin/users', { email, password, roles, name: 'Test User' });
  if (res.status !== 201) throw new Error(`user: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, email, password, roles };
}

export async function createClient(t: AuthServerHandle, metadata: Record<string, unknown>) {
  const res = await t.admin('POST', '/admin/clients', { client_id: unique('client'), ...metadata });
  if (res.status !== 201) throw new Error(`client: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { client_id: string; client_secret?: string } & Record<string, unknown>;
}

/** An API registered through the admin API (docs/roles.md "Resource servers"). */
export async function registerResource(
  t: AuthServerHandle,
  resource: {
    identifier: string;
    name?: string;
    permissions?: readonly (string | { name: string; description?: string })[];
  } & Record<string, unknown>,
) {
  const res = await t.admin('POST', '/admin/resources', {
    ...resource,
    name: resource.name ?? new URL(resource.identifier).host,
    permissions: (resource.permissions ?? []).map((p) => (typeof p === 'string' ? { name: p } : p)),
  });
  if (res.status !== 201) throw new Error(`resource: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; identifier: string } & Record<string, unknown>;
}

/** A role granting permissions on registered APIs, by identifier (PUT /admin/roles/:name). */
export async function putRole(
  t: AuthServerHandle,
  name: string,
  grants: Record<string, readonly string[]>,
) {
  const res = await t.admin('PUT', `/admin/roles/${name}`, {
    grants: Object.entries(grants).map(([resource, permissions]) => ({ resource, permissions })),
  });
  if (res.status !== 200 && res.status !== 201) {
    throw new Error(`role: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body;
}

/**
 * The scope a token for the built-in API carries when `api` was asked for: `api` and what the
 * roles grant there, sorted, as the auth server spells it out (docs/roles.md "Tokens").
 */
export async function apiScopeOf(t: AuthServerHandle, roles: readonly string[]): Promise<string> {
  const granted = new Set<string>();
  for (const role of roles) {
    const res = await t.admin('GET', `/admin/roles/${role}`);
    for (const p of (res.body['permissions'] as string[] | undefined) ?? []) granted.add(p);
  }
  return ['api', ...[...granted].sort()].join(' ');
}

/** A first-party public SPA with PKCE and refresh tokens, as the demo registers one. */
export const PUBLIC_SPA_METADATA = {
  token_endpoint_auth_method: 'none',
  redirect_uris: [REDIRECT_URI],
  grant_types: ['authorization_code', 'refresh_token'],
  first_party: true,
} as const;

export const publicSpa = (t: AuthServerHandle, extra: Record<string, unknown> = {}) =>
  createClient(t, { ...PUBLIC_SPA_METADATA, ...extra });

/** openid-client configuration for a client of the test server (plain http allowed). */
export async function discover(
  t: Pick<AuthServerHandle, 'issuer'>,
  clientId: string,
  secret?: string,
  auth?: oidc.ClientAuth,
) {
  return oidc.discovery(
    new URL(t.issuer),
    clientId,
    secret,
    auth ?? (secret ? oidc.ClientSecretBasic(secret) : oidc.None()),
    { execute: [oidc.allowInsecureRequests] },
  );
}

/** Decodes a JWS without verifying (tests verify separately with jose). */
export function decodeJwt(token: string) {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString()),
  };
}

/** Raw form POST to /token (for refusals openid-client would not send). */
export async function tokenRequest(
  t: Pick<AuthServerHandle, 'server'>,
  form: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${t.server.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      ...headers,
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as JsonBody, res };
}
