import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { ROLE_PERMISSIONS } from '@portcullis/claims';
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

  // A change to the live role table needs a migration of its own: this fails until one is written.
  it('holds the built-in roles the claims package defines', async () => {
    const rows = await t
      .db('roles')
      .where({ built_in: true })
      .orderBy('name')
      .select('name', 'permissions', 'description');
    expect(rows).toEqual([
      {
        name: 'admin',
        permissions: [...ROLE_PERMISSIONS.admin],
        description: 'Everything: every resource, every action',
      },
      {
        name: 'editor',
        permissions: [...ROLE_PERMISSIONS.editor],
        description: 'Reads and writes orders, creates payments, manages uploads',
      },
      {
        name: 'viewer',
        permissions: [...ROLE_PERMISSIONS.viewer],
        description: 'Reads users, orders and events',
      },
    ]);
    expect(rows.map((row: { name: string }) => row.name)).toEqual(Object.keys(ROLE_PERMISSIONS));
  });
});
