import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createAccessTokenVerifier,
  createLocalKeySet,
  createTokenCache,
  type Revocation,
} from '@portcullis/claims';
import {
  createDb,
  createSharedDenyList,
  type Db,
  type SharedDenyList,
  type SharedDenyListOptions,
} from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { AUDIENCE, ISSUER, makeKey, mint } from '../../claims/test/helpers.js';

let testDb: TestDatabase;
/** A second connection (pool) to the same database where the driver allows one. */
let otherDb: Db;
const lists: SharedDenyList[] = [];
const errors: unknown[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  otherDb = testDb.url ? createDb({ databaseUrl: testDb.url, poolMax: 2 }) : testDb.db;
});

afterAll(async () => {
  await Promise.all(lists.map((l) => l.close()));
  if (otherDb !== testDb.db) await otherDb.destroy();
  await testDb.close();
  expect(errors).toEqual([]);
});

const nowSec = () => Math.floor(Date.now() / 1000);

function list(options: Partial<SharedDenyListOptions> = {}): SharedDenyList {
  const created = createSharedDenyList({
    db: testDb.db,
    onError: (error) => errors.push(error),
    ...options,
  });
  lists.push(created);
  return created;
}

/** A started instance as another process would have it: own bus, so only the table connects them. */
async function instance(
  db: Db = testDb.db,
  extra: Partial<SharedDenyListOptions> = {},
): Promise<SharedDenyList> {
  const started = list({ db, bus: new EventEmitter(), ...extra });
  await started.start();
  return started;
}

/** Resolves with the first revocation `of` hears that `matches`. */
function heard(of: SharedDenyList, matches: (r: Revocation) => boolean): Promise<Revocation> {
  return new Promise((resolve) => {
    const stop = of.onRevocation((r) => {
      if (!matches(r)) return;
      stop();
      resolve(r);
    });
  });
}

describe('shared deny list', () => {
  it('denies by jti, grant and subject-before, immediately in the writing instance', async () => {
    const writer = await instance();
    const exp = nowSec() + 900;
    await writer.denyToken('jti-a', exp);
    await writer.denyGrant('grant-a', exp);
    await writer.denySubject('user-a', 1000, exp);
    expect(writer.isDenied({ jti: 'jti-a' })).toBe(true);
    expect(writer.isDenied({ jti: 'x', grant_id: 'grant-a' })).toBe(true);
    expect(writer.isDenied({ sub: 'user-a', iat: 999 })).toBe(true);
    expect(writer.isDenied({ sub: 'user-a', iat: 1000 })).toBe(false);
    expect(writer.size()).toBe(3);
    await expect(writer.denyToken('', exp)).rejects.toThrow(TypeError);
    await expect(writer.denyToken('j', Number.NaN)).rejects.toThrow(RangeError);
    await expect(writer.denySubject('u', -1, exp)).rejects.toThrow(RangeError);
  });

  it('reaches another instance by its own poll, through the table', async () => {
    const writer = await instance();
    const reader = await instance(otherDb);
    const grantHeard = heard(reader, (r) => r.value === 'grant-x');
    await writer.denyGrant('grant-x', nowSec() + 900);
    expect(await grantHeard).toEqual({ kind: 'grant', value: 'grant-x' });
    expect(reader.isDenied({ grant_id: 'grant-x' })).toBe(true);
    const subjectHeard = heard(reader, (r) => r.value === 'user-x');
    await writer.denySubject('user-x', nowSec(), nowSec() + 900);
    await subjectHeard;
    expect(reader.isDenied({ sub: 'user-x', iat: nowSec() - 5 })).toBe(true);
    expect(reader.lastSyncedAt).toBeDefined();
  });

  it('is immediate between lists of one process over one database handle', async () => {
    const a = list();
    const b = list({ pollIntervalMs: 60_000 });
    await b.start();
    expect(b.isDenied({ jti: 'same-process' })).toBe(false);
    await a.denyToken('same-process', nowSec() + 60);
    expect(b.isDenied({ jti: 'same-process' })).toBe(true);
    // Another handle is another process as far as the bus goes.
    const elsewhere = await instance(otherDb, { pollIntervalMs: 60_000, bus: undefined });
    await a.denyToken('other-handle', nowSec() + 60);
    expect(elsewhere.isDenied({ jti: 'other-handle' })).toBe(otherDb === testDb.db);
  });

  it('over the table, denies every token until its first load: an unloaded list vouches for none', async () => {
    const unloaded = list({ bus: new EventEmitter() });
    expect(unloaded.isDenied({ jti: 'anything', sub: 'anyone', iat: nowSec() })).toBe(true);
    await unloaded.start();
    expect(unloaded.isDenied({ jti: 'anything', sub: 'anyone', iat: nowSec() })).toBe(false);
    // In memory only, there is nothing to load: it vouches from the start.
    expect(list({ db: undefined }).isDenied({ jti: 'anything' })).toBe(false);
  });

  it('listens to the process bus only from start to close, so lists only written through leave no listener', async () => {
    const bus = new EventEmitter();
    const writers = Array.from({ length: 5 }, () => list({ bus }));
    expect(bus.eventNames()).toEqual([]);
    await writers[0]!.denyToken('written-only', nowSec() + 60);
    const reader = list({ bus });
    await reader.start();
    await reader.start();
    expect(bus.listenerCount(bus.eventNames()[0]!)).toBe(1);
    await reader.close();
    expect(bus.eventNames()).toEqual([]);
  });

  it('loads unexpired rows at start and skips expired ones', async () => {
    await testDb.db.raw(
      `insert into revocations (kind, value, expires_at) values ('jti', 'old', now() - interval '1 hour')`,
    );
    const writer = await instance();
    await writer.denyToken('live', nowSec() + 900);
    const late = await instance(otherDb);
    expect(late.isDenied({ jti: 'live' })).toBe(true);
    expect(late.isDenied({ jti: 'old' })).toBe(false);
  });

  it('sees a row committed with a lower id after a higher one', async () => {
    const reader = await instance(otherDb, { pollIntervalMs: 60_000 });
    const exp = nowSec() + 900;
    await testDb.db.raw(
      `insert into revocations (id, kind, value, expires_at) values (900000, 'jti', 'high', to_timestamp(?))`,
      [exp],
    );
    await reader.sync();
    expect(reader.isDenied({ jti: 'high' })).toBe(true);
    await list({ bus: new EventEmitter() }).denyToken('low', exp);
    await reader.sync();
    expect(reader.isDenied({ jti: 'low' })).toBe(true);
  });

  it('purges rows expired for over a minute, and drops expired entries from memory', async () => {
    await testDb.db.raw(
      `insert into revocations (kind, value, expires_at) values ('grant', 'purge-me', now() - interval '2 minutes')`,
    );
    let now = Date.now();
    const purging = await instance(testDb.db, { purgeIntervalMs: 20, now: () => now });
    await purging.denyToken('short-lived', nowSec() + 5);
    const held = purging.size();
    now += 10_000;
    for (;;) {
      const rows = await testDb.db('revocations').where({ value: 'purge-me' });
      if (rows.length === 0 && purging.size() < held) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(purging.isDenied({ jti: 'short-lived' })).toBe(false);
  });

  it('makes another instance refuse a token it had already verified and cached', async () => {
    const key = await makeKey('RS256', 'k');
    const apiInstance = await instance(otherDb);
    const authServer = await instance();
    const verifier = createAccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: createLocalKeySet({ keys: [key.publicJwk] }),
      denyList: apiInstance,
      cache: createTokenCache(),
    });
    const iat = nowSec();
    const token = await mint(key, { jti: 'cached', grant_id: 'g-cached', iat, exp: iat + 900 });
    await verifier.verify(token);
    await verifier.verify(token);
    const learnt = heard(apiInstance, (r) => r.value === 'g-cached');
    await authServer.denyGrant('g-cached', iat + 900);
    await learnt;
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'token_revoked' });
  });

  it('tells onRevocation listeners of each revocation once, however it arrives', async () => {
    const bus = new EventEmitter();
    const writer = list({ bus });
    const sameProcess = list({ bus });
    await sameProcess.start();
    const elsewhere = await instance(otherDb);
    const log = new Map<SharedDenyList, string[]>();
    for (const l of [writer, sameProcess, elsewhere]) {
      log.set(l, []);
      l.onRevocation((r) => log.get(l)!.push(`${r.kind}:${r.value}`));
    }
    const exp = nowSec() + 600;
    const firstTwo = heard(elsewhere, (r) => r.kind === 'subject');
    await writer.denyGrant('g-heard', exp);
    await writer.denySubject('u-heard', nowSec(), exp);
    // Written again, and reread by polls (they reread the last seconds of rows): not news.
    await writer.denyGrant('g-heard', exp);
    await firstTwo;
    await elsewhere.sync({ fresh: true });
    // A later logout of the same subject is news again.
    const third = heard(elsewhere, (r) => r.kind === 'subject');
    await writer.denySubject('u-heard', nowSec() + 1, exp);
    await third;
    await elsewhere.sync({ fresh: true });
    const expected = ['grant:g-heard', 'subject:u-heard', 'subject:u-heard'];
    for (const l of [writer, sameProcess, elsewhere]) expect(log.get(l)).toEqual(expected);
  });

  it('hands a failing listener’s error to onError and still tells the others', async () => {
    const failures: unknown[] = [];
    const own = createSharedDenyList({ onError: (error) => failures.push(error) });
    const told: string[] = [];
    own.onRevocation(() => {
      throw new Error('listener failed');
    });
    own.onRevocation((r) => told.push(r.value));
    await own.denyToken('j', nowSec() + 60);
    expect(told).toEqual(['j']);
    expect(failures).toEqual([new Error('listener failed')]);
  });
});
