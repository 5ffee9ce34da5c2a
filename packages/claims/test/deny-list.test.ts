import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDb, type Db, createRevocationStore } from '@portcullis/db';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import {
  createAccessTokenVerifier,
  createDenyList,
  createLocalKeySet,
  createTokenCache,
  type DenyList,
} from '../src/index.js';
import { AUDIENCE, ISSUER, makeKey, mint } from './helpers.js';

let testDb: TestDatabase;
/** A second connection (pool) to the same database where the driver allows one. */
let otherDb: Db;
const lists: DenyList[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  otherDb = testDb.url ? createDb({ databaseUrl: testDb.url, poolMax: 2 }) : testDb.db;
});

afterAll(async () => {
  await Promise.all(lists.map((l) => l.close()));
  if (otherDb !== testDb.db) await otherDb.destroy();
  await testDb.close();
});

const nowSec = () => Math.floor(Date.now() / 1000);

/** An instance as another process would have it: own bus, so only the database connects them. */
async function instance(
  db: Db = testDb.db,
  extra: { purgeIntervalMs?: number } = {},
): Promise<DenyList> {
  const list = createDenyList({
    store: createRevocationStore(db),
    bus: new EventEmitter(),
    pollIntervalMs: 250,
    ...extra,
  });
  lists.push(list);
  await list.start();
  return list;
}

async function timeUntil(check: () => boolean, limitMs = 2_000): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > limitMs) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

describe('deny list', () => {
  it('denies by jti, grant and subject-before, immediately in the writing instance', async () => {
    const list = await instance();
    const exp = nowSec() + 900;
    await list.denyToken('jti-a', exp);
    await list.denyGrant('grant-a', exp);
    await list.denySubject('user-a', 1000, exp);
    expect(list.isDenied({ jti: 'jti-a' })).toBe(true);
    expect(list.isDenied({ jti: 'jti-b' })).toBe(false);
    expect(list.isDenied({ jti: 'x', grant_id: 'grant-a' })).toBe(true);
    expect(list.isDenied({ jti: 'x', grantId: 'grant-a' })).toBe(true);
    expect(list.isDenied({ sub: 'user-a', iat: 999 })).toBe(true);
    expect(list.isDenied({ sub: 'user-a', iat: 1000 })).toBe(false);
    expect(list.isDenied({ sub: 'user-a' })).toBe(true);
    expect(list.isDenied({ sub: 'user-b', iat: 1 })).toBe(false);
    await expect(list.denyToken('', exp)).rejects.toThrow(TypeError);
    await expect(list.denyToken('j', Number.NaN)).rejects.toThrow(RangeError);
  });

  it('propagates a revocation to another instance through the database within 1 s', async () => {
    const writer = await instance();
    const reader = await instance(otherDb);
    await writer.denyGrant('grant-x', nowSec() + 900);
    expect(await timeUntil(() => reader.isDenied({ grant_id: 'grant-x' }))).toBeLessThan(1_000);
    await writer.denySubject('user-x', nowSec(), nowSec() + 900);
    expect(
      await timeUntil(() => reader.isDenied({ sub: 'user-x', iat: nowSec() - 5 })),
    ).toBeLessThan(1_000);
    expect(reader.lastSyncedAt).toBeDefined();
  });

  it('is immediate between instances of one process sharing the default bus', async () => {
    const a = createDenyList({ store: createRevocationStore(testDb.db) });
    const b = createDenyList({ store: createRevocationStore(testDb.db), pollIntervalMs: 60_000 });
    lists.push(a, b);
    await b.start();
    expect(b.isDenied({ jti: 'same-process' })).toBe(false);
    await a.denyToken('same-process', nowSec() + 60);
    expect(b.isDenied({ jti: 'same-process' })).toBe(true);
  });

  it('over the store, denies every token until its first load: an unloaded list vouches for none', async () => {
    const list = createDenyList({
      store: createRevocationStore(testDb.db),
      bus: new EventEmitter(),
    });
    lists.push(list);
    expect(list.isDenied({ jti: 'anything', sub: 'anyone', iat: nowSec() })).toBe(true);
    await list.start();
    expect(list.isDenied({ jti: 'anything', sub: 'anyone', iat: nowSec() })).toBe(false);
    // In memory only, there is nothing to load: it vouches from the start.
    expect(createDenyList({ bus: new EventEmitter() }).isDenied({ jti: 'anything' })).toBe(false);
  });

  it('listens to the process bus only from start to close, so lists only written through leave no listener', async () => {
    const bus = new EventEmitter();
    const writers = Array.from({ length: 5 }, () =>
      createDenyList({ store: createRevocationStore(testDb.db), bus }),
    );
    expect(bus.eventNames()).toEqual([]);
    await writers[0]!.denyToken('written-only', nowSec() + 60);
    const reader = createDenyList({ store: createRevocationStore(testDb.db), bus });
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
    const reader = await instance(otherDb);
    const exp = nowSec() + 900;
    await testDb.db.raw(
      `insert into revocations (id, kind, value, expires_at) values (900000, 'jti', 'high', to_timestamp(?))`,
      [exp],
    );
    await reader.sync();
    expect(reader.isDenied({ jti: 'high' })).toBe(true);
    const writer = createDenyList({
      store: createRevocationStore(testDb.db),
      bus: new EventEmitter(),
    });
    lists.push(writer);
    await writer.denyToken('low', exp);
    await reader.sync();
    expect(reader.isDenied({ jti: 'low' })).toBe(true);
  });

  it('purges rows expired for over a minute', async () => {
    await testDb.db.raw(
      `insert into revocations (kind, value, expires_at) values ('grant', 'purge-me', now() - interval '2 minutes')`,
    );
    await instance(testDb.db, { purgeIntervalMs: 50 });
    await timeUntil(() => false, 300).catch(() => undefined);
    const rows = await testDb.db('revocations').where({ value: 'purge-me' });
    expect(rows).toHaveLength(0);
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
    await authServer.denyGrant('g-cached', iat + 900);
    await timeUntil(() => apiInstance.isDenied({ grant_id: 'g-cached' }));
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'token_revoked' });
  });

  it('tells onRevocation listeners of each revocation once, however it arrives', async () => {
    const bus = new EventEmitter();
    const writer = createDenyList({ store: createRevocationStore(testDb.db), bus });
    const sameProcess = createDenyList({ store: createRevocationStore(testDb.db), bus });
    lists.push(writer, sameProcess);
    await sameProcess.start();
    const elsewhere = await instance(otherDb);
    const heard = new Map<DenyList, string[]>();
    for (const list of [writer, sameProcess, elsewhere]) {
      heard.set(list, []);
      list.onRevocation((r) => heard.get(list)!.push(`${r.kind}:${r.value}`));
    }
    const exp = nowSec() + 600;
    await writer.denyGrant('g-heard', exp);
    await writer.denySubject('u-heard', nowSec(), exp);
    // Written again, and reread by polls (they reread the last seconds of rows): not news.
    await writer.denyGrant('g-heard', exp);
    await timeUntil(() => heard.get(elsewhere)!.length === 2);
    await elsewhere.sync({ fresh: true });
    // A later logout of the same subject is news again.
    await writer.denySubject('u-heard', nowSec() + 1, exp);
    await timeUntil(() => heard.get(elsewhere)!.length === 3);
    await elsewhere.sync({ fresh: true });
    const expected = ['grant:g-heard', 'subject:u-heard', 'subject:u-heard'];
    for (const list of [writer, sameProcess, elsewhere]) expect(heard.get(list)).toEqual(expected);
  });
});
