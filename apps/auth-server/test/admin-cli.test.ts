import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { accountSignIn, browser, createUser, enrolTotp, REDIRECT_URI } from '@portcullis/testing';
import { compiledScript } from '../../../infra/test/helpers/processes.js';

// `npm run admin` runs this entry through tsx; compiled once here, as `pnpm build` does.
const CLI = compiledScript('apps/auth-server/src/admin/cli/admin.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run admin -- …` as a user runs it: a process of its own, with only the given variables. */
async function admin(args: string[], env: Record<string, string>): Promise<Run> {
  const cli = await CLI;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** The public keys a private_key_jwt client registers with --jwks, written in beforeAll. */
const dir = path.join(tmpdir(), `portcullis-cli-${randomUUID()}`);
const jwksFile = path.join(dir, 'jwks.json');
const registeredKeys = { keys: [expect.objectContaining({ kty: 'EC', kid: 'cli-1' })] };

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
  await mkdir(dir);
  const { publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'cli-1', alg: 'ES256' };
  await writeFile(jwksFile, JSON.stringify({ keys: [jwk] }));
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

const adminEnv = () => ({
  ADMIN_PORT: new URL(t.server.adminUrl).port,
  ADMIN_TOKEN: t.server.adminToken,
});

/** The client as the admin API lists it. */
async function listed(clientId: string) {
  const res = await t.admin('GET', '/admin/clients');
  return (res.body.items as { client_id: string }[]).find((c) => c.client_id === clientId);
}

describe('npm run admin', () => {
  test('finds the admin API by ADMIN_PORT', async () => {
    const port = new URL(t.server.adminUrl).port;
    const run = await admin(['signing-key:list', '--json'], {
      ADMIN_PORT: port,
      ADMIN_TOKEN: t.server.adminToken,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).items).toHaveLength(1);
  });

  test('an unreachable admin API: says which URL it tried and why, exits 69', async () => {
    const port = await closedPort();
    const run = await admin(['client:list'], { ADMIN_PORT: String(port), ADMIN_TOKEN: 'x' });
    expect(run.code).toBe(69);
    expect(run.stderr).toContain(`http://127.0.0.1:${port}/admin/clients`);
    expect(run.stderr).toContain('ECONNREFUSED');
    expect(run.stderr).toMatch(/ADMIN_PORT/);
    expect(run.stderr).not.toMatch(/^fetch failed$/m);
  });

  test('ADMIN_URL overrides ADMIN_PORT; an answer that is not the admin API is named', async () => {
    const run = await admin(['client:list'], {
      ADMIN_PORT: '1',
      ADMIN_URL: t.issuer,
      ADMIN_TOKEN: 'x',
    });
    expect(run.code).toBe(69);
    expect(run.stderr).toContain(`${t.issuer}/admin/clients`);
    expect(run.stderr).toMatch(/not the admin API/);
  });

  test('--help prints the usage and exits 0; no command is a usage error, 64', async () => {
    const help = await admin(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: npm run admin -- <command>');
    const none = await admin([], {});
    expect(none.code).toBe(64);
    expect(none.stderr).toContain('usage: npm run admin -- <command>');
  });

  test('lists print one readable row an item, narrow, with --json for the whole answer', async () => {
    const env = adminEnv();
    await admin(['client:create', '--client-id', 'cli-rows', '--redirect-uri', REDIRECT_URI], env);
    const run = await admin(['client:list'], env);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^client_id\s/);
    expect(lines.find((l) => l.startsWith('cli-rows '))).toContain('authorization_code');
    expect(lines.at(-1)).toMatch(/^\(\d+\)$/);
    expect(run.stdout).not.toContain('[Object]');
    expect(run.stdout).not.toContain('┌');
    const json = await admin(['client:list', '--json'], env);
    expect(JSON.parse(json.stdout).items).toEqual(
      expect.arrayContaining([expect.objectContaining({ client_id: 'cli-rows' })]),
    );
  });

  test('user:roles, user:disable, user:enable, user:reset-password, user:force-reset; client:update, client:rotate-secret', async () => {
    const env = adminEnv();
    const user = await createUser(t, ['viewer']);
    const roles = await admin(['user:roles', user.id, '--roles', 'editor,viewer', '--json'], env);
    expect(roles.code).toBe(0);
    expect(JSON.parse(roles.stdout).roles).toEqual(['editor', 'viewer']);

    const disable = await admin(['user:disable', user.id], env);
    expect(disable.code).toBe(0);
    expect(disable.stdout).toMatch(/^disabledAt\s+\d{4}-/m);
    const enable = await admin(['user:enable', user.id, '--json'], env);
    expect(JSON.parse(enable.stdout).disabledAt).toBeNull();

    const reset = await admin(['user:reset-password', user.id, '--generate'], env);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(/^password\s+[A-Za-z0-9_-]{24}$/m);
    expect(reset.stdout).toContain('shown only this once');
    const usage = await admin(['user:reset-password', user.id], env);
    expect(usage.code).toBe(64);
    const weak = await admin(['user:reset-password', user.id, '--password', 'short'], env);
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('validation_failed');

    // Without SMTP_URL the link goes to the development mailbox; the queued mail is in the outbox.
    const forced = await admin(['user:force-reset', user.id, '--json'], env);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ id: user.id, reset_link_mailed: true });
    const queued = await t.database.db('mail_outbox').where({ recipient: user.email }).first();
    expect(queued).toBeDefined();
    expect((await admin(['user:force-reset'], env)).code).toBe(64);

    const created = await admin(
      ['client:create', '--grant-types', 'client_credentials', '--roles', 'viewer', '--json'],
      env,
    );
    const client = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
    const updated = await admin(
      ['client:update', client.client_id, '--scope', 'api', '--roles', 'editor', '--json'],
      env,
    );
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ scope: 'api', roles: ['editor'] });
    const rotated = await admin(['client:rotate-secret', client.client_id], env);
    expect(rotated.code).toBe(0);
    const secret = /^client_secret\s+(\S+)$/m.exec(rotated.stdout)?.[1];
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(secret).not.toBe(client.client_secret);
    expect(rotated.stdout).toContain('shown only this once');

    const audit = await admin(['audit', '--json', '--limit', '50'], env);
    expect(JSON.parse(audit.stdout).items.map((e: { kind: string }) => e.kind)).toEqual(
      expect.arrayContaining([
        'user_roles_changed',
        'user_disabled',
        'user_enabled',
        'password_reset',
        'client_updated',
        'client_secret_rotated',
      ]),
    );
  });

  test('an invalid ADMIN_PORT is named, exit 78', async () => {
    const run = await admin(['client:list'], { ADMIN_PORT: 'eighty', ADMIN_TOKEN: 'x' });
    expect(run.code).toBe(78);
    expect(run.stderr).toContain('ADMIN_PORT');
  });
});

describe('npm run admin -- client:create: each flag gives the metadata it promises', () => {
  test.each<[string, string[], Record<string, unknown>]>([
    [
      '--jwks FILE --auth-alg',
      [
        '--grant-types',
        'client_credentials',
        '--auth-method',
        'private_key_jwt',
        '--jwks',
        jwksFile,
        '--auth-alg',
        'ES256',
      ],
      {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: registeredKeys,
        token_endpoint_auth_signing_alg: 'ES256',
      },
    ],
    [
      '--legacy-assertion-audience',
      [
        '--grant-types',
        'client_credentials',
        '--auth-method',
        'private_key_jwt',
        '--jwks',
        jwksFile,
        '--legacy-assertion-audience',
      ],
      { token_endpoint_auth_method: 'private_key_jwt', client_assertion_legacy_audience: true },
    ],
    [
      '--jwks-uri',
      [
        '--grant-types',
        'client_credentials',
        '--auth-method',
        'private_key_jwt',
        '--jwks-uri',
        'http://127.0.0.1:9/jwks.json',
      ],
      {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'http://127.0.0.1:9/jwks.json',
      },
    ],
    [
      '--native',
      [
        '--native',
        '--auth-method',
        'none',
        '--redirect-uri',
        'http://127.0.0.1/cb',
        '--redirect-uri',
        'com.example.app:/callback',
      ],
      {
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://127.0.0.1/cb', 'com.example.app:/callback'],
      },
    ],
    [
      '--require-par',
      ['--require-par', '--redirect-uri', REDIRECT_URI],
      { require_pushed_authorization_requests: true },
    ],
    [
      '--introspection',
      ['--introspection', '--grant-types', 'client_credentials'],
      { introspection: true, grant_types: ['client_credentials'] },
    ],
    [
      '--roles --scope --dpop-bound --first-party',
      [
        '--grant-types',
        'client_credentials',
        '--roles',
        'viewer',
        '--scope',
        'api',
        '--dpop-bound',
        '--first-party',
      ],
      { roles: ['viewer'], scope: 'api', dpop_bound_access_tokens: true, first_party: true },
    ],
  ])('%s', async (_flags, args, expected) => {
    const clientId = `cli-${randomUUID()}`;
    const run = await admin(
      ['client:create', '--client-id', clientId, ...args, '--json'],
      adminEnv(),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ client_id: clientId });
    expect(await listed(clientId)).toMatchObject(expected);
  });

  test('--fapi: FAPI 2.0 with PAR, DPoP and ES256 implied', async () => {
    // ES256 ID tokens need an ES256 key that signs (the default is RS256).
    const rotated = await t.admin('POST', '/admin/signing-keys', { alg: 'ES256', activate: 'now' });
    expect(rotated.status).toBe(201);
    const clientId = `cli-${randomUUID()}`;
    const run = await admin(
      [
        'client:create',
        '--client-id',
        clientId,
        '--fapi',
        '--auth-method',
        'private_key_jwt',
        '--jwks',
        jwksFile,
        '--redirect-uri',
        'https://app.example.com/cb',
        '--json',
      ],
      adminEnv(),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(await listed(clientId)).toMatchObject({
      fapi: '2.0',
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      require_pushed_authorization_requests: true,
      dpop_bound_access_tokens: true,
      id_token_signed_response_alg: 'ES256',
      jwks: registeredKeys,
    });
  });

  test('--exchange-audience and --impersonation: a token-exchange policy; --no-exchange removes it', async () => {
    const clientId = `cli-${randomUUID()}`;
    const audiences = ['https://ledger.example.com', 'https://billing.example.com'];
    const create = await admin(
      [
        'client:create',
        '--client-id',
        clientId,
        '--grant-types',
        'client_credentials',
        ...audiences.flatMap((a) => ['--exchange-audience', a]),
        '--impersonation',
        '--json',
      ],
      adminEnv(),
    );
    expect(create.stderr).toBe('');
    expect(await listed(clientId)).toMatchObject({
      grant_types: ['client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      token_exchange: { audiences, impersonation: true },
    });
    const off = await admin(['client:update', clientId, '--no-exchange', '--json'], adminEnv());
    expect(off.code).toBe(0);
    const after = await listed(clientId);
    expect(after).toMatchObject({ grant_types: ['client_credentials'] });
    expect(after).not.toHaveProperty('token_exchange');
  });

  test('--exchange-audience on a public client (--auth-method none) is refused: exit 1', async () => {
    const clientId = `cli-${randomUUID()}`;
    const run = await admin(
      [
        'client:create',
        '--client-id',
        clientId,
        '--auth-method',
        'none',
        '--redirect-uri',
        REDIRECT_URI,
        '--exchange-audience',
        'https://ledger.example.com',
      ],
      adminEnv(),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('token exchange is for clients that authenticate');
    expect(await listed(clientId)).toBeUndefined();
  });

  test('a refused registration exits 1 with the API’s error', async () => {
    const run = await admin(
      ['client:create', '--native', '--redirect-uri', 'http://127.0.0.1/cb'],
      adminEnv(),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('a native app cannot keep a secret');
  });
});

describe('npm run admin -- user:factors / user:reset-factors', () => {
  test("lists a user's authenticator app and removes it, audited", async () => {
    const user = await createUser(t, ['viewer']);
    const { recoveryCodes } = await enrolTotp(t, browser(), user);
    expect(recoveryCodes.length).toBeGreaterThan(0);
    const env = adminEnv();

    const before = await admin(['user:factors', user.id, '--json'], env);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout)).toEqual({
      items: [expect.objectContaining({ kind: 'totp', id: expect.any(String) })],
      recovery_codes_remaining: recoveryCodes.length,
    });

    const reset = await admin(['user:reset-factors', user.id, '--json'], env);
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({
      recovery_codes_removed: recoveryCodes.length,
    });
    const after = await admin(['user:factors', user.id, '--json'], env);
    expect(JSON.parse(after.stdout)).toEqual({ items: [], recovery_codes_remaining: 0 });
    const audited = await t.database
      .db('audit_events')
      .where({ kind: 'mfa_reset', subject: user.id });
    expect(audited).toHaveLength(1);

    expect((await admin(['user:factors'], env)).code).toBe(64);
  });
});

describe('npm run admin -- user:sessions / user:end-sessions', () => {
  test("lists a user's sessions and grants, ends one, then all, audited", async () => {
    const user = await createUser(t, ['viewer']);
    await accountSignIn(t, browser(), user);
    await accountSignIn(t, browser(), user);
    const env = adminEnv();

    const table = await admin(['user:sessions', user.id], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^Sessions\nid\s+signed_in_at/);
    expect(table.stdout).toMatch(/^Grants\nid\s+client_id/m);
    const listed = JSON.parse((await admin(['user:sessions', user.id, '--json'], env)).stdout);
    expect(listed.items).toHaveLength(2);

    const one = await admin(['user:end-sessions', user.id, '--session', listed.items[0].id], env);
    expect(one.code).toBe(0);
    expect(one.stdout.trim()).toBe('done');
    const left = JSON.parse((await admin(['user:sessions', user.id, '--json'], env)).stdout);
    expect(left.items.map((s: { id: string }) => s.id)).toEqual([listed.items[1].id]);

    await new Promise((r) => setTimeout(r, 5)); // after the sign-ins, to the millisecond
    expect((await admin(['user:end-sessions', user.id], env)).code).toBe(0);
    const none = JSON.parse((await admin(['user:sessions', user.id, '--json'], env)).stdout);
    expect(none).toEqual({ items: [], grants: [] });
    const kinds = await t.database
      .db('audit_events')
      .where({ subject: user.id })
      .whereIn('kind', ['session_ended', 'sessions_ended'])
      .pluck('kind');
    expect(kinds.sort()).toEqual(['session_ended', 'sessions_ended']);

    expect((await admin(['user:sessions'], env)).code).toBe(64);
    expect((await admin(['user:end-sessions', 'nobody'], env)).code).toBe(1);
  });
});

describe('npm run admin -- role:* / permission:list', () => {
  test('lists permissions and roles, sets a role, refuses an unknown permission', async () => {
    const env = adminEnv();
    const permissions = await admin(['permission:list'], env);
    expect(permissions.code).toBe(0);
    expect(permissions.stdout.trimEnd().split('\n')).toEqual(
      expect.arrayContaining(['orders:read', 'orders:*', 'api-keys:delete']),
    );

    const set = await admin(
      [
        'role:set',
        'cli-auditor',
        '--permissions',
        'orders:read,payments:read',
        '--description',
        'Audits',
      ],
      env,
    );
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/^permissions\s+\["orders:read","payments:read"\]$/m);
    const listedRoles = await admin(['role:list'], env);
    expect(listedRoles.code).toBe(0);
    // Every permission shown in full, the description under it.
    expect(listedRoles.stdout).toMatch(/^cli-auditor\s+orders:read,payments:read\n\s+Audits$/m);
    expect(listedRoles.stdout).toMatch(
      /^admin\s+api-keys:\*,events:read,orders:\*,payments:\*,uploads:\*,users:\*\n\s+built-in: /m,
    );
    const json = await admin(['role:list', '--json'], env);
    expect(JSON.parse(json.stdout).items).toContainEqual(
      expect.objectContaining({ name: 'cli-auditor', builtIn: false }),
    );

    const unknown = await admin(
      ['role:set', 'cli-auditor', '--permissions', 'orders:approve'],
      env,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/error 422: .*unknown permission orders:approve/);
    const usage = await admin(['role:set', 'cli-auditor'], env);
    expect(usage.code).toBe(64);
  });

  test('role:delete: refused while a user holds the role, then done; both audited', async () => {
    const env = adminEnv();
    await t.admin('PUT', '/admin/roles/cli-temp', { permissions: ['orders:read'] });
    const user = await createUser(t, ['cli-temp']);
    const held = await admin(['role:delete', 'cli-temp'], env);
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(/error 409: .*held by 1 user/);
    await t.admin('PATCH', `/admin/users/${user.id}`, { roles: [] });
    const deleted = await admin(['role:delete', 'cli-temp'], env);
    expect(deleted).toMatchObject({ code: 0, stdout: 'done\n' });

    const audit = await t.admin('GET', '/admin/audit?limit=50');
    const kinds = (audit.body.items as { kind: string; detail: { role?: string } }[])
      .filter((e) => e.detail.role === 'cli-temp')
      .map((e) => e.kind);
    expect(kinds).toEqual(['role_deleted', 'role_created']);
  });
});

describe('npm run admin -- resource:* / role:set --resource', () => {
  test('a resource from creation to deletion, by id or identifier; a role granting on two', async () => {
    const env = adminEnv();
    const identifier = `https://cli-${randomUUID().slice(0, 8)}.example.com`;
    const created = await admin(
      [
        'resource:create',
        identifier,
        '--name',
        'Invoices',
        '--permission',
        'invoices:read=Read invoices',
        '--permission',
        'invoices:write',
        '--ttl',
        '600',
        '--alg',
        'ES256',
        '--dpop',
        '--json',
      ],
      env,
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const resource = JSON.parse(created.stdout) as { id: string };
    expect(resource).toMatchObject({
      identifier,
      name: 'Invoices',
      accessTokenTtl: 600,
      signingAlg: 'ES256',
      dpopRequired: true,
      followsDenyList: false,
      permissions: [
        { name: 'invoices:read', description: 'Read invoices' },
        { name: 'invoices:write', description: '' },
      ],
    });

    const listed = await admin(['resource:list'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^id\s+identifier\s+name\s+permissions\s+ttl\s+alg\s+dpop/m);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^${resource.id}\\s+${identifier}\\s+Invoices\\s+2\\s+600\\s+ES256\\s+true\\s+false\\s+false$`,
        'm',
      ),
    );
    expect(listed.stdout).toMatch(
      new RegExp(
        `\\s${t.apiAudience}\\s+Portcullis API\\s+20\\s+default\\s+default\\s+false\\s+true\\s+true$`,
        'm',
      ),
    );

    // Shown by its identifier as by its id: each permission on a line with its description.
    for (const ref of [identifier, resource.id]) {
      const shown = await admin(['resource:show', ref], env);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^signingAlg\s+ES256$/m);
      expect(shown.stdout).toMatch(
        /^permissions\n {2}invoices:read\s+Read invoices\n {2}invoices:write$/m,
      );
    }

    const updated = await admin(
      [
        'resource:update',
        identifier,
        '--name',
        'Billing',
        '--ttl',
        'default',
        '--no-dpop',
        '--deny-list',
        '--permission',
        'invoices:delete=Delete invoices',
        '--json',
      ],
      env,
    );
    expect(updated).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(updated.stdout)).toMatchObject({
      name: 'Billing',
      accessTokenTtl: null,
      signingAlg: 'ES256',
      dpopRequired: false,
      followsDenyList: true,
      permissions: [
        { name: 'invoices:delete', description: 'Delete invoices' },
        { name: 'invoices:read' },
        { name: 'invoices:write' },
      ],
    });
    const described = await admin(
      ['resource:permission:set', identifier, 'invoices:write', '--description', 'Change invoices'],
      env,
    );
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/^ {2}invoices:write\s+Change invoices$/m);

    // role:set --resource replaces the grants on that resource only; without it, on this API.
    const role = `cli-billing-${randomUUID().slice(0, 6)}`;
    expect((await admin(['role:set', role, '--permissions', 'orders:read'], env)).code).toBe(0);
    const both = await admin(
      [
        'role:set',
        role,
        '--resource',
        identifier,
        '--permissions',
        'invoices:read,invoices:write',
        '--json',
      ],
      env,
    );
    expect(both.code).toBe(0);
    const grants = [
      { resource: t.apiAudience, resourceId: expect.any(String), permissions: ['orders:read'] },
      {
        resource: identifier,
        resourceId: resource.id,
        permissions: ['invoices:read', 'invoices:write'],
      },
    ];
    expect(JSON.parse(both.stdout).grants).toEqual(expect.arrayContaining(grants));
    const builtIn = await admin(['role:set', role, '--permissions', 'events:read', '--json'], env);
    expect(JSON.parse(builtIn.stdout)).toMatchObject({ permissions: ['events:read'] });
    expect(JSON.parse(builtIn.stdout).grants).toContainEqual(grants[1]);
    const roles = await admin(['role:list'], env);
    expect(roles.stdout).toMatch(
      new RegExp(
        `^${role}\\s+events:read\\n\\s+on ${identifier}: invoices:read,invoices:write$`,
        'm',
      ),
    );
    const unknown = await admin(
      ['role:set', role, '--resource', identifier, '--permissions', 'invoices:approve'],
      env,
    );
    expect(unknown).toMatchObject({ code: 1 });
    expect(unknown.stderr).toMatch(/error 422: .*unknown permission invoices:approve/);
    const nowhere = await admin(
      ['role:set', role, '--resource', 'https://nowhere.example.com', '--permissions', 'x:read'],
      env,
    );
    expect(nowhere.stderr).toMatch(/error 422: .*unknown resource https:\/\/nowhere/);

    // A permission removed leaves the role; then the resource, and the role's grants on it.
    const removed = await admin(['resource:permission:delete', resource.id, 'invoices:write'], env);
    expect(removed).toMatchObject({ code: 0, stdout: 'done\n' });
    expect((await t.admin('GET', `/admin/roles/${role}`)).body.grants).toContainEqual({
      ...grants[1],
      permissions: ['invoices:read'],
    });
    expect((await admin(['resource:delete', identifier], env)).stdout).toBe('done\n');
    expect((await t.admin('GET', `/admin/roles/${role}`)).body.grants).toEqual(
      [grants[0]!].map((g) => ({ ...g, permissions: ['events:read'] })),
    );

    const audit = await t.admin('GET', '/admin/audit?limit=100');
    const kinds = (audit.body.items as { kind: string; detail: { resource?: string } }[])
      .filter((e) => e.detail.resource === identifier)
      .map((e) => e.kind);
    expect(kinds).toEqual([
      'resource_deleted',
      'permission_deleted',
      'permission_updated',
      'permission_created',
      'resource_updated',
      'resource_created',
    ]);
  });

  test('refusals: usage (64), an unknown identifier, the API’s 4xx (1)', async () => {
    const env = adminEnv();
    for (const args of [
      ['resource:create', 'https://x.example.com'],
      ['resource:create', '--name', 'X'],
      ['resource:show'],
      ['resource:update', 'https://x.example.com'],
      ['resource:update', 'https://x.example.com', '--dpop', '--no-dpop'],
      ['resource:permission:set', 'https://x.example.com'],
      ['resource:permission:delete'],
    ]) {
      expect([args, (await admin(args, env)).code]).toEqual([args, 64]);
    }
    const unknown = await admin(['resource:show', 'https://unknown.example.com'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /no resource has the identifier https:\/\/unknown\.example\.com/,
    );
    const bad = await admin(['resource:create', 'http://api.example.com', '--name', 'X'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/error 422: .*identifier/);
    const ttl = await admin(
      ['resource:create', 'https://ttl.example.com', '--name', 'X', '--ttl', 'soon'],
      env,
    );
    expect(ttl.stderr).toMatch(/error 422: .*accessTokenTtl/);
    const mine = await admin(['resource:create', t.apiAudience, '--name', 'Mine'], env);
    expect(mine.stderr).toMatch(/error 409: .*API_AUDIENCE/);
    const builtIn = await admin(['resource:delete', t.apiAudience], env);
    expect(builtIn).toMatchObject({ code: 1 });
    expect(builtIn.stderr).toMatch(/error 409/);
  });
});

describe('npm run admin -- signing-key:retire / audit filters', () => {
  test('retires a next key; audit --subject and --actor narrow the list', async () => {
    const env = adminEnv();
    const next = await t.admin('POST', '/admin/signing-keys', { alg: 'ES256' });
    const retired = await admin(['signing-key:retire', next.body.kid, '--json'], env);
    expect(retired).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(retired.stdout)).toMatchObject({ kid: next.body.kid, status: 'expired' });
    expect((await admin(['signing-key:retire'], env)).code).toBe(64);

    const user = await createUser(t);
    const bySubject = await admin(['audit', '--subject', user.id, '--json'], env);
    expect(JSON.parse(bySubject.stdout).items).toEqual([
      expect.objectContaining({ kind: 'user_created', subject: user.id, actor: 'admin-token' }),
    ]);
    const byActor = await admin(['audit', '--actor', 'nobody', '--json'], env);
    expect(JSON.parse(byActor.stdout).items).toEqual([]);
    const bad = await admin(['audit', '--since', 'yesterday'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/error 422/);
  });
});
