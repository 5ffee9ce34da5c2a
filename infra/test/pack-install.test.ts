/**
 * The published packages as an outside project gets them (packages/client/README.md,
 * packages/claims/README.md): `pnpm pack` of packages/client and packages/claims, the tarballs installed
 * with npm into a project outside the workspace, and plain `node` scripts there (no tsx,
 * no workspace links) against a started stack: the SDK gets a client-credentials token and
 * lists orders; a tiny Express server protected by `@portcullis/claims/express` answers
 * tokens of the auth server as any resource server would. Run with this Node and, when
 * the machine has an older one on PATH, with that too.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { pino } from 'pino';
import { ACR } from '@portcullis/claims';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createUser,
  discover,
  pkceSignIn,
  publicSpa,
  TEST_API_AUDIENCE,
} from '@portcullis/testing';
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
  const dependencies: Record<string, string> = { express: '^5.1.0' };
  for (const name of ['client', 'claims']) {
    const packed = path.join(project, 'packed', name);
    await run('pnpm', ['pack', '--pack-destination', packed], {
      cwd: path.join(root, 'packages', name),
    });
    const [tarball] = await readdir(packed);
    dependencies[`@portcullis/${name}`] = `file:./packed/${name}/${tarball}`;
  }
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'outside', private: true, type: 'module', dependencies }),
  );
  // The SDK has no dependencies, the middleware only jose, the tiny server express:
  // from npm's cache when it has them, else from the registry.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
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
}, 180_000);

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

// A resource server of someone else's, in a few lines: every route needs a token of the
// issuer, /step-up also a sign-in with a second factor. It asks itself for the answers.
const PROTECTED = `
import express from 'express';
import { ACR, createResourceServer } from '@portcullis/claims';
import { expressAuth } from '@portcullis/claims/express';
import { clientCredentials, createDpopKey, portcullisEndpoints } from '@portcullis/client';

const { ISSUER, AUDIENCE, CLIENT_ID, CLIENT_SECRET, USER_TOKEN } = process.env;
const auth = createResourceServer({ issuer: ISSUER, audience: AUDIENCE });
const app = express();
app.use(expressAuth(auth));
app.get('/me', (req, res) => res.json({ subject: req.auth.principal.subject }));
app.get('/step-up', expressAuth(auth, { stepUp: { acr: ACR.mfa, maxAgeSec: 300 } }), (req, res) =>
  res.json({ subject: req.auth.principal.subject }),
);
const listener = app.listen(0, '127.0.0.1');
await new Promise((resolve) => listener.once('listening', resolve));
const url = \`http://127.0.0.1:\${listener.address().port}\`;

async function call(path, headers = {}) {
  const res = await fetch(url + path, { headers });
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    body: await res.json(),
  };
}
const tokenUrl = portcullisEndpoints(ISSUER).tokenEndpoint;
const client = { tokenUrl, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scope: 'api' };
const bearer = (await clientCredentials(client)).access_token;
const dpop = await createDpopKey();
const bound = (await clientCredentials({ ...client, dpop })).access_token;
const results = {
  bearer: await call('/me', { authorization: \`Bearer \${bearer}\` }),
  none: await call('/me'),
  bad: await call('/me', { authorization: 'Bearer not.a.token' }),
  boundAsBearer: await call('/me', { authorization: \`Bearer \${bound}\` }),
  dpop: await call('/me', {
    authorization: \`DPoP \${bound}\`,
    dpop: await dpop.proof('GET', url + '/me', { accessToken: bound }),
  }),
  stepUp: await call('/step-up', { authorization: \`Bearer \${USER_TOKEN}\` }),
};
listener.close();
console.log(JSON.stringify(results));
`;

test('the packed middleware protects an Express server outside the workspace', async () => {
  const service = await auth.admin('POST', '/admin/clients', {
    client_id: 'outside-resource-client',
    grant_types: ['client_credentials'],
    roles: ['viewer'],
    scope: 'api',
  });
  expect(service.status).toBe(201);
  // A password-only sign-in of a user: its token is valid but too weak for /step-up.
  const user = await createUser(auth, ['viewer']);
  const spa = await publicSpa(auth);
  const signedIn = await pkceSignIn(await discover(auth, spa.client_id), user, {
    scope: 'openid api',
  });
  await writeFile(path.join(project, 'protected.mjs'), PROTECTED);
  const binaries = await nodes();
  for (const node of binaries) {
    const { stdout } = await run(node, ['protected.mjs'], {
      cwd: project,
      env: {
        PATH: process.env['PATH']!,
        ISSUER: auth.issuer,
        AUDIENCE: TEST_API_AUDIENCE,
        CLIENT_ID: 'outside-resource-client',
        CLIENT_SECRET: service.body['client_secret'] as string,
        USER_TOKEN: signedIn.access_token,
      },
    });
    const results = JSON.parse(stdout) as Record<
      string,
      { status: number; challenge: string | null; body: Record<string, unknown> }
    >;
    expect(results['bearer']).toMatchObject({
      status: 200,
      body: { subject: 'client:outside-resource-client' },
    });
    expect(results['none']!.status).toBe(401);
    expect(results['none']!.challenge).toMatch(/^Bearer realm="portcullis", DPoP realm=/);
    expect(results['none']!.body).toEqual({ error: 'unauthenticated' });
    expect(results['bad']!.status).toBe(401);
    expect(results['bad']!.challenge).toMatch(/^Bearer realm="portcullis", error="invalid_token"/);
    expect(results['bad']!.body).toMatchObject({ error: 'invalid_token' });
    expect(results['boundAsBearer']).toMatchObject({
      status: 401,
      body: { error: 'invalid_token', message: expect.stringContaining('DPoP-bound') },
    });
    expect(results['dpop']).toMatchObject({
      status: 200,
      body: { subject: 'client:outside-resource-client' },
    });
    expect(results['stepUp']!.status).toBe(401);
    expect(results['stepUp']!.challenge).toMatch(
      new RegExp(
        `^Bearer realm="portcullis", error="insufficient_user_authentication", ` +
          `error_description="[^"]+", acr_values="${ACR.mfa}", max_age=300`,
      ),
    );
    expect(results['stepUp']!.body).toMatchObject({
      error: 'insufficient_user_authentication',
      acr_values: ACR.mfa,
      max_age: 300,
    });
  }
});
