import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import ts from 'typescript';

const MIGRATIONS = new URL('../src/migrations/', import.meta.url);

/** What a migration may import: knex's types and node's built-ins, never code that changes later. */
function liveImportsOf(source: string): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles
    .map((file) => file.fileName)
    .filter((name) => name !== 'knex' && !name.startsWith('node:'));
}

describe('migrations freeze their data', () => {
  const files = readdirSync(MIGRATIONS).filter((name) => name.endsWith('.ts'));

  it('no migration imports anything but knex types and node built-ins', () => {
    expect(files.length).toBeGreaterThan(20);
    const live = files.flatMap((name) =>
      liveImportsOf(readFileSync(new URL(name, MIGRATIONS), 'utf8')).map((i) => `${name}: ${i}`),
    );
    expect(live).toEqual([]);
  });

  it('the check sees static, type-only, re-exported and dynamic imports of live code', () => {
    expect(liveImportsOf("import { ROLE_PERMISSIONS } from '@portcullis/claims';")).toEqual([
      '@portcullis/claims',
    ]);
    expect(liveImportsOf("import type { Role } from '../roles.js';")).toEqual(['../roles.js']);
    expect(liveImportsOf("export { Perm } from '@portcullis/claims';")).toEqual([
      '@portcullis/claims',
    ]);
    expect(liveImportsOf("const m = await import('../values.js');")).toEqual(['../values.js']);
    expect(liveImportsOf("const m = require('../values.js');")).toEqual(['../values.js']);
    expect(
      liveImportsOf("import type { Knex } from 'knex';\nimport { randomUUID } from 'node:crypto';"),
    ).toEqual([]);
  });
});

describe(`a fresh database on ${process.env['DATABASE_URL'] ? 'PostgreSQL' : 'PGlite'}`, () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.close();
  });

  // The demo API's catalogue and the built-in roles' grants on it, as migrations 026 and 029 froze them.
  it('holds the built-in API and what the built-in roles grant there', async () => {
    const [api] = await t.db('resource_servers').where({ built_in: true }).select('*');
    expect(api).toMatchObject({
      identifier: null,
      name: 'Portcullis API',
      follows_deny_list: true,
    });
    const permissions = await t
      .db('resource_permissions')
      .where({ resource_id: api.id })
      .pluck('name');
    expect(permissions).toHaveLength(20);
    const grants = await t
      .db('role_permissions')
      .where({ resource_id: api.id })
      .orderBy(['role', 'permission'])
      .select('role', 'permission');
    const byRole = (role: string) =>
      grants
        .filter((g: { role: string }) => g.role === role)
        .map((g: { permission: string }) => g.permission);
    expect(byRole('admin')).toEqual([
      'api-keys:*',
      'events:read',
      'orders:*',
      'payments:*',
      'uploads:*',
      'users:*',
    ]);
    expect(byRole('editor')).toEqual([
      'events:read',
      'orders:read',
      'orders:write',
      'payments:create',
      'uploads:*',
      'users:read',
    ]);
    expect(byRole('viewer')).toEqual(['events:read', 'orders:read', 'users:read']);
    const roles = await t.db('roles').where({ built_in: true }).orderBy('name').pluck('name');
    expect(roles).toEqual(['admin', 'editor', 'viewer']);
  });
});
