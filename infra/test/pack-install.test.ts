/**
 * The SDK as an outside project gets it (README "Client SDK"): `pnpm pack` of
 * packages/client, the tarball installed with npm into a project outside the workspace,
 * and a plain `node` script there (no tsx, no workspace links) that gets a
 * client-credentials token and lists orders through the SDK, against a started stack.
 * Run with this Node and, when the machine has an older one on PATH, with that too.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { pino } from 'pino';
import { startTestAuthServer, TEST_API_AUDIENCE, type TestAuthServer } from '@portcullis/testing';
import { parseApiConfig, startApiServer, type RunningApiServer } from '@portcullis/api';
import { root } from './helpers/processes.js';

const run = promisify(execFile);

let database: TestDatabase;
let dataDir: string;
let project: string;
let auth: TestAuthServer;
let api: RunningApiServer;

beforeAll(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'portcullis-outside-'));
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-pack-api-'));
  const packed = path.join(project, 'packed');
  await run('pnpm', ['pack', '--pack-destination', packed], {
    cwd: path.join(root, 'packages/client'),
  });
  const [tarball] = await readdir(packed);
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({
      name: 'outside',
      private: true,
      type: 'module',
      dependencies: { '@portcullis/client': `file:./packed/${tarball}` },
    }),
  );
  // The SDK has no dependencies: nothing to fetch.
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: project,
  });

  database = await createTestDatabase();
  const logger = pino({ level: 'silent' });
  auth = await startTestAuthServer({}, { db: database.db, logger });
  api = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: '0',
      ISSUER: auth.issuer,
      API_AUDIENCE: TEST_API_AUDIENCE,
      DATA_DIR: dataDir,
    }),
    { db: database.db, logger },
  );
}, 120_000);

afterAll(async () => {
  await api?.close();
  await auth?.close();
  await database?.close();
  for (const dir of [project, dataDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

const SCRIPT = `
import {
  ApiError,
  clientCredentials,
  createPortcullisClient,
  portcullisEndpoints,
} from '@portcullis/client';

const { ISSUER, API_URL, CLIENT_ID, CLIENT_SECRET } = process.env;
const token = await clientCredentials({
  tokenUrl: portcullisEndpoints(ISSUER).tokenEndpoint,
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  scope: 'api',
});
const client = createPortcullisClient({ baseUrl: API_URL, accessToken: token.access_token });
const created = await client.orders.create({ customer: 'outside', amount: 1200, currency: 'EUR' });
const page = await client.orders.list();
const missing = await client.orders
  .get('00000000-0000-4000-8000-000000000000')
  .catch((error) => error);
console.log(
  JSON.stringify({
    listed: page.items.some((order) => order.id === created.id),
    missing: missing instanceof ApiError ? [missing.status, missing.error] : String(missing),
  }),
);
`;

/** The Node binaries to run the script with: this one, and the machine's own when it differs. */
async function nodes(): Promise<string[]> {
  const ours = path.dirname(process.execPath);
  const elsewhere = process.env['PATH']!.split(path.delimiter).filter(
    (dir) => dir !== ours && !dir.startsWith(root),
  );
  const found = await run('sh', ['-c', 'command -v node'], {
    env: { PATH: elsewhere.join(path.delimiter) },
  }).catch(() => undefined);
  const other = found?.stdout.trim();
  return other ? [process.execPath, other] : [process.execPath];
}

test('the packed SDK installs with npm outside the workspace and works from plain node', async () => {
  const created = await auth.admin('POST', '/admin/clients', {
    client_id: 'outside-service',
    grant_types: ['client_credentials'],
    roles: ['admin'],
    scope: 'api',
  });
  expect(created.status).toBe(201);
  await writeFile(path.join(project, 'main.mjs'), SCRIPT);
  const binaries = await nodes();
  for (const node of binaries) {
    const { stdout } = await run(node, ['main.mjs'], {
      cwd: project,
      env: {
        PATH: process.env['PATH']!,
        ISSUER: auth.issuer,
        API_URL: api.url,
        CLIENT_ID: 'outside-service',
        CLIENT_SECRET: created.body['client_secret'] as string,
      },
    });
    expect(JSON.parse(stdout)).toEqual({ listed: true, missing: [404, 'not_found'] });
  }
  console.info(`ran the packed SDK with ${binaries.join(' and ')}`);
});
