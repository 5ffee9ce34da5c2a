import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { coalesced, createDb, isUniqueViolation, prepared, toCount, toJsonb } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';

// The same assertions run on PGlite (default) and on PostgreSQL (DATABASE_URL set):
// the driver differences we rely on being smoothed over are pinned here.
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.close();
});

function user(id: string, email: string, roles: string[]) {
  return { id, email, name: null, roles: toJsonb(roles), password_hash: 'x' };
}

describe(`packages/db on ${process.env['DATABASE_URL'] ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('applies migrations once and reports nothing pending afterwards', async () => {
    const [, pending] = (await t.db.migrate.list({
      migrationSource: (await import('@portcullis/db')).migrationSource,
    })) as [unknown[], unknown[]];
    expect(pending).toHaveLength(0);
  });

  it('returns counts as numbers through toCount', async () => {
    await t.db('users').insert([user('u1', 'a@example.com', []), user('u2', 'b@example.com', [])]);
    const row = await t.db('users').count<{ count: unknown }[]>({ count: '*' }).first();
    expect(toCount(row?.count)).toBe(2);
  });

  it('round-trips jsonb arrays as arrays', async () => {
    await t.db('users').insert(user('u3', 'c@example.com', ['admin', 'viewer']));
    const row = await t.db('users').where({ id: 'u3' }).first();
    expect(row.roles).toEqual(['admin', 'viewer']);
    const found = await t.db('users').whereRaw(`roles @> ?::jsonb`, [toJsonb(['admin'])]);
    expect(found.map((r: { id: string }) => r.id)).toEqual(['u3']);
  });

  it('returns timestamptz as Date in UTC', async () => {
    const row = await t.db('users').where({ id: 'u3' }).first();
    expect(row.created_at).toBeInstanceOf(Date);
    expect(Math.abs(row.created_at.getTime() - Date.now())).toBeLessThan(60_000);
    const [{ ts }] = (await t.db.raw(`SELECT '2026-01-02T03:04:05Z'::timestamptz AS ts`)).rows as [
      { ts: Date },
    ];
    expect(ts.toISOString()).toBe('2026-01-02T03:04:05.000Z');
  });

  it('enforces case-insensitive email uniqueness with a recognisable error', async () => {
    const err = await t
      .db('users')
      .insert(user('u4', 'A@Example.com', []))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isUniqueViolation(err)).toBe(true);
  });

  it('rejects non-count values loudly', () => {
    expect(() => toCount('abc')).toThrow(TypeError);
  });

  it('runs a prepared statement like db.raw, and PostgreSQL keeps it planned per connection', async () => {
    const sql = 'select id from users where id = any(?::text[]) order by id';
    for (const ids of [['u1'], ['u1', 'u2'], ['nobody'], ['u2', 'u3']]) {
      const { rows } = (await prepared(t.db, sql, [ids])) as { rows: { id: string }[] };
      expect(rows.map((r) => r.id)).toEqual(ids.filter((id) => id !== 'nobody').sort());
    }
    if (t.kind !== 'postgres') return; // PGlite plans each time
    // One connection, so the statement and the check meet in the same session.
    const single = createDb({ databaseUrl: t.url!, poolMax: 1 });
    try {
      await prepared(single, sql, [['u1']]);
      await prepared(single, sql, [['u2']]);
      const { rows } = (await single.raw(
        `select name, statement from pg_prepared_statements where statement like '%users%'`,
      )) as { rows: { name: string; statement: string }[] };
      expect(rows).toHaveLength(1);
      expect(rows[0]!.name).toMatch(/^portcullis_[0-9a-f]{24}$/);
      expect(rows[0]!.statement).toBe(
        'select id from users where id = any($1::text[]) order by id',
      );
    } finally {
      await single.destroy();
    }
  });

  describe('coalesced calls', () => {
    // Squares numbers given as text, in SQL: a key that is not a number fails the cast.
    const statements: string[] = [];
    const square = () =>
      coalesced(async (keys: readonly string[]) => {
        statements.push(keys.join(','));
        const { rows } = (await t.db.raw(
          'select k::int * k::int as square from unnest(?::text[]) with ordinality as u(k, n) order by n',
          [keys as string[]],
        )) as { rows: { square: number }[] };
        return rows.map((row) => row.square);
      });

    it('runs the calls of one turn of the event loop as one statement, answers in call order', async () => {
      statements.length = 0;
      const load = square();
      expect(await Promise.all(['3', '1', '3', '2'].map(load))).toEqual([9, 1, 9, 4]);
      expect(statements).toEqual(['3,1,3,2']);
      // Calls after the answer make a statement of their own (nothing is cached).
      expect(await load('3')).toBe(9);
      expect(statements).toHaveLength(2);
    });

    it('a key that fails fails alone: the others are answered', async () => {
      statements.length = 0;
      const load = square();
      const results = await Promise.allSettled(['2', 'two', '5'].map(load));
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
        4,
        'rejected',
        25,
      ]);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      // The batch, then each key alone.
      expect(statements).toEqual(['2,two,5', '2', 'two', '5']);
    });
  });
});
