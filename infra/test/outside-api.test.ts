/**
 * A second API, someone else's, from outside the workspace (docs/roles.md "Outside the
 * Portcullis API", packages/claims/README.md "A complete service"): `pnpm pack` of
 * packages/claims, installed with npm into a project outside the workspace next to express,
 * and a plain `node` service there with no role table. Registered through the admin API, given
 * to a role in the console (real Chromium), it lets the role's holders read and not write, by
 * the scope of the tokens Portcullis issues for it; a permission taken from the role ends in
 * the next token.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { RunningApiServer } from '@portcullis/api';
import { startApiBeside } from './helpers/api-beside.js';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  type BrowserSignIn,
  asConsoleAdmin,
  startBrowserSignIn,
} from '@portcullis/testing/browser';
import {
  createClient,
  createUser,
  decodeJwt,
  discover,
  freePort,
  pkceSignIn,
  publicSpa,
  putRole,
  registerResource,
  tokenRequest,
} from '@portcullis/testing';
import { root } from './helpers/processes.js';

const run = promisify(execFile);
const READ = 'invoices:read';
const WRITE = 'invoices:write';

// The service's whole code: the README's, its audience its own URL, as registered.
const SERVICE = `
import express from 'express';
import { createResourceServer } from '@portcullis/claims';
import { expressAuth } from '@portcullis/claims/express';

const { ISSUER, PORT } = process.env;
const audience = \`http://127.0.0.1:\${PORT}\`;
const auth = createResourceServer({ issuer: ISSUER, audience });
const invoices = [];
const app = express();
app.use(expressAuth(auth));
app.get('/invoices', expressAuth(auth, { permission: '${READ}' }), (req, res) => {
  res.json({ items: invoices });
});
app.post('/invoices', expressAuth(auth, { permission: '${WRITE}' }), express.json(), (req, res) => {
  const invoice = { amount: req.body?.amount, createdBy: req.auth.principal.subject };
  invoices.push(invoice);
  res.status(201).json(invoice);
});
app.listen(Number(PORT), '127.0.0.1', () => console.log(\`listening at \${audience}\`));
`;

let stack: BrowserSignIn | undefined;
let t: TestAuthServer;
let project: string | undefined;
let dataDir: string | undefined;
let api: RunningApiServer | undefined;
let apiUrl: string;
let service: ChildProcess | undefined;
let serviceUrl: string;
/** The role made in the console, granting invoices:read on the service. */
let role: string;
/** A client-credentials client holding `role`, and a token it got while the role granted invoices:read. */
let machine: { client_id: string; client_secret?: string };
let earlierToken: string;

/** `pnpm pack` of packages/claims and `npm install` of it with express into `dir`, outside the workspace. */
async function installClaims(dir: string): Promise<void> {
  const packed = path.join(dir, 'packed');
  await run('pnpm', ['pack', '--pack-destination', packed], {
    cwd: path.join(root, 'packages', 'claims'),
  });
  const [tarball] = await readdir(packed);
  const dependencies = { express: '^5.1.0', '@portcullis/claims': `file:./packed/${tarball}` };
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'invoices', private: true, type: 'module', dependencies }),
  );
  await writeFile(path.join(dir, 'service.mjs'), SERVICE);
  // From npm's cache when it has them, else from the registry.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: dir,
  });
}

/** `node service.mjs` in the project; resolves once it listens, fails if it exits first. */
function startService(port: number, issuer: string): Promise<ChildProcess> {
  // The preload only ends the service with this process (helpers/exit-with-parent.mjs).
  const preload = path.join(import.meta.dirname, 'helpers', 'exit-with-parent.mjs');
  const child = spawn(process.execPath, ['--import', preload, 'service.mjs'], {
    cwd: project,
    env: { PATH: process.env['PATH'] ?? '', ISSUER: issuer, PORT: String(port) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  service = child;
  let output = '';
  return new Promise((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening at')) resolve(child);
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`service exited ${code}:\n${output}`)));
  });
}

beforeAll(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'portcullis-outside-api-'));
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-outside-api-data-'));
  apiUrl = `http://127.0.0.1:${await freePort()}`;
  const port = await freePort();
  serviceUrl = `http://127.0.0.1:${port}`;
  // Packing and installing wait mostly on disk and npm; the auth server and Chromium meanwhile.
  const [installed, started] = await Promise.allSettled([
    installClaims(project),
    startBrowserSignIn({ API_AUDIENCE: apiUrl }).then((s) => (stack = s)),
  ]);
  for (const result of [installed, started]) if (result.status === 'rejected') throw result.reason;
  t = stack!.auth;
  api = await startApiBeside(t, apiUrl, dataDir);
  await startService(port, t.issuer);
}, 180_000);

afterAll(async () => {
  if (service && service.exitCode === null && service.signalCode === null) {
    const exited = new Promise((resolve) => service!.once('exit', resolve));
    service.kill('SIGTERM');
    await exited;
  }
  await api?.close();
  await stack?.close();
  for (const dir of [project, dataDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  challenge: string | null;
  body: unknown;
}

async function call(url: string, token: string, method = 'GET'): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: JSON.stringify({ amount: 1200 }) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    body: text ? JSON.parse(text) : undefined,
  };
}

const invoices = (token: string, method = 'GET') => call(`${serviceUrl}/invoices`, token, method);

/** RFC 6750 §3.1: 403 naming the scope the token lacks, the body the package's refusal. */
function expectInsufficientScope(answer: Answer, scope: string): void {
  expect(answer.status).toBe(403);
  expect(answer.body).toEqual({ error: 'forbidden' });
  expect(answer.challenge).toMatch(
    new RegExp(`^Bearer realm="portcullis", error="insufficient_scope", scope="${scope}"`),
  );
}

const basic = (c: { client_id: string; client_secret?: string }) => ({
  authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`,
});

/** A client-credentials token for the service, asking for both permissions. */
async function serviceToken(client: { client_id: string; client_secret?: string }) {
  const res = await tokenRequest(
    t,
    { grant_type: 'client_credentials', resource: serviceUrl, scope: `${READ} ${WRITE}` },
    basic(client),
  );
  expect(res.status).toBe(200);
  return res.body['access_token'] as string;
}

test('the service is registered through the admin API as a second resource', async () => {
  const registered = await registerResource(t, {
    identifier: serviceUrl,
    name: 'Invoices',
    permissions: [
      { name: READ, description: 'Read invoices' },
      { name: WRITE, description: 'Create invoices' },
    ],
  });
  const list = await t.admin('GET', '/admin/resources');
  expect(list.body['items']).toEqual([
    expect.objectContaining({ identifier: apiUrl, builtIn: true }),
    expect.objectContaining({
      id: registered.id,
      identifier: serviceUrl,
      builtIn: false,
      permissions: [
        { name: READ, description: 'Read invoices' },
        { name: WRITE, description: 'Create invoices' },
      ],
    }),
  ]);
});

test('a role made in the console grants invoices:read on it', async () => {
  role = `invoice-reader-${Math.random().toString(36).slice(2, 8)}`;
  await asConsoleAdmin(t, stack!.browser, '/console/roles', async (page) => {
    await page.fill('input[name="name"]', role);
    const group = page.getByRole('group', { name: 'Invoices' });
    await group.getByRole('checkbox', { name: READ }).check();
    await page.click('form:has(input[name="name"]) button[type="submit"]');
    await page.getByRole('status').filter({ hasText: 'Role created.' }).waitFor();
  });
  const made = await t.admin('GET', `/admin/roles/${role}`);
  expect(made.body).toMatchObject({
    permissions: [],
    grants: [{ resource: serviceUrl, permissions: [READ] }],
  });
}, 90_000);

test('a user holding the role, signed in for the service: reads, and may not write', async () => {
  const user = await createUser(t, [role]);
  const spa = await publicSpa(t);
  const tokens = await pkceSignIn(await discover(t, spa.client_id), user, {
    scope: `openid ${READ} ${WRITE}`,
    resource: serviceUrl,
  });
  const claims = decodeJwt(tokens.access_token).payload;
  expect(claims).toMatchObject({ aud: serviceUrl, scope: READ, roles: [role] });

  expect(await invoices(tokens.access_token)).toMatchObject({ status: 200, body: { items: [] } });
  expectInsufficientScope(await invoices(tokens.access_token, 'POST'), WRITE);
});

test('a client-credentials client holding the role, likewise; one granted both writes', async () => {
  machine = await createClient(t, {
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    roles: [role],
  });
  earlierToken = await serviceToken(machine);
  expect(decodeJwt(earlierToken).payload).toMatchObject({ aud: serviceUrl, scope: READ });
  expect(await invoices(earlierToken)).toMatchObject({ status: 200 });
  expectInsufficientScope(await invoices(earlierToken, 'POST'), WRITE);

  // The refusal is the scope's: a role granting write lets the same route through.
  await putRole(t, 'invoice-writer', { [serviceUrl]: [READ, WRITE] });
  const writer = await createClient(t, {
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    roles: ['invoice-writer'],
  });
  const written = await invoices(await serviceToken(writer), 'POST');
  expect(written).toMatchObject({
    status: 201,
    body: { amount: 1200, createdBy: `client:${writer.client_id}` },
  });
});

test("the Portcullis API keeps answering its own tokens, and each API refuses the other's", async () => {
  const client = await createClient(t, {
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    roles: ['viewer', role],
  });
  const own = await tokenRequest(
    t,
    { grant_type: 'client_credentials', scope: 'api' },
    basic(client),
  );
  expect(own.status).toBe(200);
  const apiToken = own.body['access_token'] as string;
  expect(decodeJwt(apiToken).payload['aud']).toBe(apiUrl);
  expect((await call(`${apiUrl}/orders`, apiToken)).status).toBe(200);

  // The only audience of a token is its API.
  expect(await invoices(apiToken)).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
  expect((await call(`${apiUrl}/orders`, await serviceToken(client))).status).toBe(401);
});

test('a permission taken from the role: the next token is refused, an earlier one holds until it expires', async () => {
  const taken = await t.admin('PUT', `/admin/roles/${role}`, { grants: [] });
  expect(taken.status).toBe(200);
  expect(taken.body['grants']).toEqual([]);

  const next = await serviceToken(machine);
  expect(decodeJwt(next).payload['scope']).toBeUndefined();
  expectInsufficientScope(await invoices(next), READ);

  // This service reads permissions from the token's scope and follows no deny list: a token
  // issued before the change keeps working here until it expires (docs/roles.md "Changes
  // take effect", "at any other API"), at most the API's accessTokenTtl.
  const { exp } = decodeJwt(earlierToken).payload as { exp: number };
  expect(exp * 1000).toBeGreaterThan(Date.now());
  expect(await invoices(earlierToken)).toMatchObject({ status: 200 });
});
