import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import knexFactory, { type Knex } from 'knex';
import { createDb, type Db } from './create-db.js';
import { migrateLatest } from './migrate.js';
import { startTcpProxy, viaProxy, type TcpProxy } from './tcp-proxy.js';

export interface TestDatabase {
  db: Db;
  url: string | undefined;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

/** A digest of the migrations and their list: a template made from other migrations is never used. */
function schemaDigest(): string {
  const dir = fileURLToPath(new URL('./migrations/', import.meta.url));
  const hash = createHash('sha256');
  for (const file of readdirSync(dir).sort())
    hash.update(file).update(readFileSync(path.join(dir, file)));
  // The list in migrate.ts decides which of them run.
  for (const list of ['./migrate.ts', './migrate.js']) {
    const file = fileURLToPath(new URL(list, import.meta.url));
    if (existsSync(file)) hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/** Templates of other schemas a day old or more: no current checkout still uses them. */
async function removeStaleImages(current: string): Promise<void> {
  const dayAgo = Date.now() - 86_400_000;
  for (const name of readdirSync(tmpdir())) {
    const file = path.join(tmpdir(), name);
    if (!name.startsWith('portcullis-pglite-template-') || file === current) continue;
    await stat(file)
      .then((s) => (s.mtimeMs < dayAgo ? rm(file, { force: true }) : undefined))
      .catch(() => undefined);
  }
}

/** One migrated PGlite dump per schema, shared through a file: faster than boot plus migrations. */
async function migratedPgliteImage(): Promise<Blob> {
  const file = path.join(tmpdir(), `portcullis-pglite-template-${schemaDigest()}.tar`);
  try {
    return new Blob([await readFile(file)]);
  } catch {
    const db = createDb({});
    try {
      await migrateLatest(db);
      // knex-pglite keeps its one PGlite instance on the client.
      const pglite = (db.client as { pglite: PGlite }).pglite;
      const others = await pglite.query<{ oid: number }>(
        'SELECT oid FROM pg_database WHERE datname <> current_database()',
      );
      const dump = new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
      const image = withoutEntries(
        dump,
        others.rows.map(({ oid }) => `base/${oid}/`),
      );
      // Written aside and renamed: a file beside it being read is always whole.
      const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      await writeFile(partial, image);
      await rename(partial, file);
      await removeStaleImages(file);
      return new Blob([image]);
    } finally {
      await db.destroy();
    }
  }
}

/**
 * The tar `archive` without the entries under `prefixes`. Here: the files of template0 and
 * template1, which a test database never opens; without them a copy loads 40 % faster. An
 * archive with extended headers is returned whole.
 */
function withoutEntries(archive: Uint8Array, prefixes: string[]): Uint8Array {
  const kept: Uint8Array[] = [];
  const text = (at: number, length: number) =>
    Buffer.from(archive.subarray(at, at + length))
      .toString('latin1')
      .replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= archive.length;) {
    const name = path.posix.join(text(at + 345, 155), text(at, 100)).replace(/^\//, '');
    if (name === '.' || name === '') break; // the zero blocks that end an archive
    const type = text(at + 156, 1);
    if (type !== '0' && type !== '' && type !== '5') return archive;
    const size = parseInt(text(at + 124, 12).trim() || '0', 8);
    const end = at + 512 + Math.ceil(size / 512) * 512;
    if (!prefixes.some((prefix) => `${name}/`.startsWith(prefix)))
      kept.push(archive.subarray(at, end));
    at = end;
  }
  kept.push(new Uint8Array(1024));
  return Buffer.concat(kept);
}

/** A PGlite copy of the template, or with DATABASE_URL a PostgreSQL copy of one that `close()` drops. */
export async function createTestDatabase(
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const baseUrl = process.env['DATABASE_URL'];
  let result: TestDatabase;
  if (baseUrl) {
    const name = `portcullis_test_${randomBytes(6).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: baseUrl, pool: { min: 0, max: 1 } });
    if (options.migrate !== false) {
      const template = await migratedPostgresTemplate(admin, baseUrl);
      await admin.raw(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    } else await admin.raw(`CREATE DATABASE ${name}`);
    const url = databaseUrl(baseUrl, name);
    const db = createDb({ databaseUrl: url, poolMax: 10 });
    result = {
      db,
      url,
      kind: 'postgres',
      async close() {
        await db.destroy();
        try {
          await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await admin.destroy();
        }
      },
    };
  } else {
    const migrated = options.migrate !== false;
    const db = createDb({ embeddedImage: migrated ? await migratedPgliteImage() : undefined });
    return { db, url: undefined, kind: 'pglite', close: () => db.destroy() };
  }
  return result;
}

const databaseUrl = (baseUrl: string, name: string) => {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

/**
 * One migrated PostgreSQL database per schema that test databases are copied from (a copy takes
 * a third of a migration run). Built under a private name and renamed, so a copy is never taken
 * of a half-migrated one; two processes racing build it twice and one copy is dropped.
 */
async function migratedPostgresTemplate(admin: Knex, baseUrl: string): Promise<string> {
  const name = `portcullis_template_${schemaDigest()}`;
  const found = await admin('pg_database').where({ datname: name }).first('datname');
  if (found) return name;
  const partial = `${name}_${randomBytes(4).toString('hex')}`;
  await admin.raw(`CREATE DATABASE ${partial}`);
  const db = createDb({ databaseUrl: databaseUrl(baseUrl, partial), poolMax: 1 });
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
  try {
    await admin.raw(`ALTER DATABASE ${partial} RENAME TO ${name}`);
    // Nobody connects to it, so copying it never fails on "being accessed by other users".
    await admin.raw(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
  } catch (error) {
    await admin.raw(`DROP DATABASE IF EXISTS ${partial}`);
    if ((error as { code?: string }).code !== '42P04') throw error;
  }
  return name;
}

export interface ProxiedTestDatabase extends TestDatabase {
  /** Between `proxiedUrl` and PostgreSQL: freeze it to play a database that stops answering. */
  proxy: TcpProxy;
  proxiedUrl: string;
  /** Sessions PostgreSQL still holds open inside a transaction on this database. */
  openTransactions(): Promise<number>;
}

/** A fresh PostgreSQL database behind a proxy the test owns, to freeze or cut it alone. */
export async function createProxiedTestDatabase(): Promise<ProxiedTestDatabase> {
  const database = await createTestDatabase();
  if (!database.url) {
    await database.close();
    throw new Error('a proxied test database needs PostgreSQL (DATABASE_URL)');
  }
  const target = new URL(database.url);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  return {
    ...database,
    proxy,
    proxiedUrl: viaProxy(database.url, proxy),
    async openTransactions() {
      const { rows } = (await database.db.raw(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and state like 'idle in transaction%'`,
      )) as { rows: { n: number }[] };
      return rows[0]!.n;
    },
    async close() {
      proxy.thaw();
      await proxy.close();
      await database.close();
    },
  };
}

export { startTcpProxy, viaProxy, type TcpProxy } from './tcp-proxy.js';
