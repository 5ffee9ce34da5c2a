// The real authorization server on a PostgreSQL database of its own (created here,
// dropped on exit), with one confidential admin client for the benchmark to use.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { pino } from 'pino';
import { pkceSignIn, PUBLIC_SPA_METADATA } from '@portcullis/testing';
import { createTestDatabase } from '@portcullis/db/testing';
import { parseAuthConfig, startAuthServer } from '@portcullis/auth-server';

const database = await createTestDatabase();
const config = parseAuthConfig({
  ...process.env,
  AUTH_PORT: '0',
  ADMIN_PORT: '0',
  SEED_DEMO: 'false',
  DATA_DIR: mkdtempSync(path.join(tmpdir(), 'portcullis-bench-')),
  API_AUDIENCE: 'http://localhost:3000',
});
const server = await startAuthServer(config, {
  db: database.db,
  logger: pino({ level: 'silent' }),
});
const response = await fetch(`${server.adminUrl}/admin/clients`, {
  method: 'POST',
  headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    client_name: 'bench',
    grant_types: ['client_credentials'],
    token_endpoint_auth_method: 'client_secret_basic',
    roles: ['admin'],
  }),
});
const client = (await response.json()) as { client_id: string; client_secret: string };

// Refresh-token chains for the rotation benchmark: a user and a first-party public client,
// signed in through the real login form and PKCE exchange, BENCH_CHAINS times.
const admin = async (route: string, body: unknown) => {
  const res = await fetch(`${server.adminUrl}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, string>;
};
const user = { email: 'bench@example.com', password: 'bench-password-1' };
await admin('/admin/users', { ...user, roles: ['editor'] });
const spa = await admin('/admin/clients', {
  client_id: 'bench-spa',
  ...PUBLIC_SPA_METADATA,
});
const refreshTokens: string[] = [];
const chains = Number(process.env['BENCH_CHAINS'] ?? 0);
if (chains > 0) {
  const config = await oidc.discovery(
    new URL(server.issuer),
    spa['client_id']!,
    undefined,
    oidc.None(),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  for (let i = 0; i < chains; i++) {
    const tokens = await pkceSignIn(config, user, { scope: 'openid offline_access api' });
    refreshTokens.push(tokens.refresh_token!);
  }
}
console.log(
  JSON.stringify({
    url: server.url,
    issuer: server.issuer,
    databaseUrl: database.url,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    spaClientId: spa['client_id'],
    email: user.email,
    password: user.password,
    refreshTokens,
  }),
);
process.on('SIGTERM', async () => {
  await server.close();
  await database.close();
  process.exit(0);
});
