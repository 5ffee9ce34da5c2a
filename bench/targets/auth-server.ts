// The real authorization server on a PostgreSQL database of its own (created here,
// dropped on exit), with one confidential admin client for the benchmark to use.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
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
console.log(
  JSON.stringify({
    url: server.url,
    issuer: server.issuer,
    databaseUrl: database.url,
    clientId: client.client_id,
    clientSecret: client.client_secret,
  }),
);
process.on('SIGTERM', async () => {
  await server.close();
  await database.close();
  process.exit(0);
});
