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
