import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { createDb, createSharedDenyList, type Db, type SharedDenyList } from '@portcullis/db';
import { rethrow } from '@portcullis/testing';
import { startApiServer, type RunningApiServer } from '../src/index.js';
import { createEventsRepo } from '../src/data/events-repo.js';
import { activeListeners, createEventBus } from '../src/events/bus.js';
import { login, withSession, sidOf, PASSWORD } from './helpers/credentials.js';
import { makeUser, newOrderBody } from './helpers/factories.js';
import { claimsOf, startTestApi, type TestApi } from './helpers/harness.js';

interface Frame {
  id?: string;
  data?: string;
  comment?: string;
}

/**
 * A server-sent-events reader over fetch: the body is read chunk by chunk and frames
 * are parsed as they complete (a frame may span chunks, a chunk may hold several).
 */
class SseReader {
  private buffer = '';
  private readonly frames: Frame[] = [];
  private done = false;
  private wake: (() => void) | undefined;
  readonly controller = new AbortController();
  response!: Response;

  static async open(url: string, headers: Record<string, string>): Promise<SseReader> {
    const reader = new SseReader();
    reader.response = await fetch(url, { headers, signal: reader.controller.signal });
    if (reader.response.ok) void reader.pump();
    return reader;
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.response.body!) {
        this.buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = this.buffer.indexOf('\n\n')) !== -1) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const frame: Frame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim();
            else if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('data: ')) frame.data = line.slice(6);
          }
          this.frames.push(frame);
        }
        this.wake?.();
      }
    } catch {
      // aborted
    }
    this.done = true;
    this.wake?.();
  }

  /** The next frame with data, or undefined when the stream ended first. */
  async next(
    timeoutMs = 20_000,
  ): Promise<{ id: string; event: { type: string; subjectId: string } } | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((f) => f.data !== undefined);
      if (index !== -1) {
        const [frame] = this.frames.splice(0, index + 1).slice(-1);
        return { id: frame!.id!, event: JSON.parse(frame!.data!) };
      }
      if (this.done) return undefined;
      if (Date.now() > deadline) throw new Error('no frame in time');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  /** Whether the stream ended within `timeoutMs` (generous by default: a busy machine is slow). */
  async ended(timeoutMs = 20_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    return this.done;
  }

  sawComment(text: string): boolean {
    return this.commentCount(text) > 0;
  }

  commentCount(text: string): number {
    return this.frames.filter((f) => f.comment === text).length;
  }

  close(): void {
    this.controller.abort();
  }
}

let api: TestApi;
/** The API's clock runs this many ms ahead of the wall clock (token expiry test). */
let offset = 0;
const STREAM_ENV = { STREAM_HEARTBEAT_MS: '100', EVENTS_POLL_MS: '50', STREAMS_PER_PRINCIPAL: '3' };

const open = (token: string, headers: Record<string, string> = {}, base = api.url) =>
  SseReader.open(`${base}/stream`, { authorization: `Bearer ${token}`, ...headers });

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const createOrder = async (token: string, base?: string) => {
  const res = base
    ? await fetch(`${base}/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(newOrderBody()),
      }).then(async (r) => ({ status: r.status, body: await r.json() }))
    : await api.request('POST', '/orders', { token, body: newOrderBody() });
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
};

beforeAll(async () => {
  api = await startTestApi({ env: STREAM_ENV, deps: { now: () => Date.now() + offset } });
});
afterAll(() => api.close());

describe('GET /stream', () => {
  test('delivers the caller’s events live, with ids, heartbeats and SSE headers; not other users’', async () => {
    const alice = await api.token('s-alice', ['editor']);
    const bob = await api.token('s-bob', ['editor']);
    const stream = await open(alice);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.response.headers.get('cache-control')).toBe('no-store');
    expect(stream.response.headers.get('content-encoding')).toBeNull();
    try {
      await until(() => activeListeners() > 0);
      await createOrder(bob);
      const mine = await createOrder(alice);
      const frame = await stream.next();
      expect(frame!.event).toMatchObject({
        type: 'order.created',
        subjectId: mine,
        subjectType: 'order',
      });
      expect(frame!.id).toMatch(/^\d+$/);
      expect(frame!.event).toHaveProperty('id', frame!.id);
      await until(() => stream.sawComment('ping'));
    } finally {
      stream.close();
    }
  });

  test('resumes from Last-Event-ID: missed events are replayed first, then live ones follow', async () => {
    const token = await api.token('s-resume', ['editor']);
    const first = await open(token);
    await until(() => activeListeners() > 0);
    await createOrder(token);
    const seen = await first.next();
    first.close();
    const missed = [await createOrder(token), await createOrder(token)];
    const second = await open(token, { 'last-event-id': seen!.id });
    try {
      const replayed = [await second.next(), await second.next()];
      expect(replayed.map((f) => f!.event.subjectId)).toEqual(missed);
      expect(Number(replayed[0]!.id)).toBeGreaterThan(Number(seen!.id));
      const live = await createOrder(token);
      expect((await second.next())!.event.subjectId).toBe(live);
    } finally {
      second.close();
    }
  });

  test('a revoked token ends its stream (deny list, checked at each heartbeat)', async () => {
    const token = await api.token('s-revoked', ['editor']);
    const stream = await open(token);
    expect(stream.response.status).toBe(200);
    const { jti, exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      jti: string;
      exp: number;
    };
    const denyList = createSharedDenyList({ db: api.database.db, onError: rethrow });
    await denyList.denyToken(jti, exp);
    await denyList.close();
    expect(await stream.ended()).toBe(true);
  });

  test('a logged-out session ends its stream', async () => {
    const user = await makeUser(api.database.db, ['editor']);
    const sid = sidOf(await login(api, user.email, PASSWORD))!;
    const stream = await SseReader.open(`${api.url}/stream`, { cookie: `sid=${sid}` });
    expect(stream.response.status).toBe(200);
    expect((await api.request('POST', '/logout', { headers: withSession(sid) })).status).toBe(204);
    expect(await stream.ended()).toBe(true);
  });

  test('the stream ends when the token expires', async () => {
    const token = await api.token('s-expiring', ['editor']);
    // A real token lives ACCESS_TOKEN_TTL (60 s at least): the API's clock is moved to 2 s
    // before its exp instead of waiting.
    const expMs = Number(claimsOf(token)['exp']) * 1000;
    offset = expMs - Date.now() - 2000;
    try {
      const stream = await open(token);
      expect(stream.response.status).toBe(200);
      expect(await stream.ended()).toBe(true);
      // Ended by the expiry, not before: the API's clock has reached `exp` (timers may round).
      expect(Date.now() + offset).toBeGreaterThanOrEqual(expMs - 50);
    } finally {
      offset = 0;
    }
  });

  test('at most STREAMS_PER_PRINCIPAL concurrent streams per caller: 429 with Retry-After', async () => {
    const token = await api.token('s-capped', ['editor']);
    const streams = [await open(token), await open(token), await open(token)];
    try {
      expect(streams.map((s) => s.response.status)).toEqual([200, 200, 200]);
      const refused = await open(token);
      expect(refused.response.status).toBe(429);
      expect(refused.response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await refused.response.json()).toMatchObject({ error: 'rate_limited' });
      streams.pop()!.close();
      await new Promise((r) => setTimeout(r, 100));
      const again = await open(token);
      expect(again.response.status).toBe(200);
      streams.push(again);
    } finally {
      for (const s of streams) s.close();
    }
  });

  test('heartbeats recheck the credential without spending the caller’s rate limit', async () => {
    const { rateLimits } = api.config;
    const stingy = await startApiServer(
      { ...api.config, rateLimits: { ...rateLimits, jwt: { ...rateLimits.jwt, points: 3 } } },
      { db: api.database.db, logger: pino({ level: 'silent' }) },
    );
    const token = await api.token('s-stingy', ['editor']);
    const stream = await open(token, {}, stingy.url);
    try {
      expect(stream.response.status).toBe(200);
      // Ten heartbeats, each a recheck: counted, they would have ended the stream at the third.
      await until(() => stream.commentCount('ping') >= 10);
      const read = await fetch(`${stingy.url}/orders`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(read.status).toBe(200);
      const live = await createOrder(token, stingy.url);
      expect((await stream.next())!.event.subjectId).toBe(live);
    } finally {
      stream.close();
      await stingy.close();
    }
  });

  test('200 streams opened and aborted leave no listener behind', async () => {
    // Streams of earlier tests are gone first (each cleans up when its socket closes).
    await until(() => activeListeners() === 0);
    const before = activeListeners();
    // One signed-in user on an instance that allows 200 streams per caller (200 real
    // sign-ins would cost 200 argon2id hashes and verifications).
    const roomy = await startApiServer(
      { ...api.config, streams: { ...api.config.streams, perPrincipal: 200 } },
      { db: api.database.db, logger: pino({ level: 'silent' }) },
    );
    try {
      const token = await api.token('s-many', ['viewer']);
      const streams = await Promise.all(
        Array.from({ length: 200 }, () => open(token, {}, roomy.url)),
      );
      expect(streams.every((s) => s.response.status === 200)).toBe(true);
      await until(() => activeListeners() === before + 200);
      for (const s of streams) s.close();
      await until(() => activeListeners() === before, 10_000);
      expect(activeListeners()).toBe(before);
    } finally {
      await roomy.close();
    }
  });

  test('an instance shutting down refuses new streams: 503 with Retry-After', async () => {
    const eventBus = createEventBus({
      events: createEventsRepo(api.database.db),
      pollMs: 50,
      onError: () => undefined,
    });
    const closing = await startApiServer(api.config, {
      db: api.database.db,
      logger: pino({ level: 'silent' }),
      eventBus,
    });
    try {
      await eventBus.close();
      const refused = await open(await api.token('s-closing', ['viewer']), {}, closing.url);
      expect(refused.response.status).toBe(503);
      expect(refused.response.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await closing.close();
    }
  });

  test('HEAD /stream answers its headers at once and opens no stream (found by the fuzzer)', async () => {
    const token = await api.token('s-head', ['editor']);
    const res = await fetch(`${api.url}/stream`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(3000),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    // Opens no stream: the caller's whole quota of streams is still there.
    const streams = await Promise.all([1, 2, 3].map(() => open(token)));
    try {
      expect(streams.map((s) => s.response.status)).toEqual([200, 200, 200]);
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  test('needs events:read; no credential -> 401', async () => {
    const narrow = await api.token('s-narrow', ['editor'], { scope: 'orders:read' });
    const res = await open(narrow);
    expect(res.response.status).toBe(403);
    expect((await fetch(`${api.url}/stream`)).status).toBe(401);
  });
});

describe('two API instances on one database', () => {
  let second: RunningApiServer;
  let secondDb: Db | undefined;

  beforeAll(async () => {
    // PostgreSQL: an instance with its own connection pool. PGlite (one connection, one
    // process): the second app shares the handle. Each has its own event bus either way.
    secondDb = api.database.url ? createDb({ databaseUrl: api.database.url }) : undefined;
    second = await startApiServer(api.config, {
      db: secondDb ?? api.database.db,
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await second.close();
    await secondDb?.destroy();
  });

  test('an order created through one instance reaches a stream on the other', async () => {
    const token = await api.token('s-multi', ['editor']);
    const stream = await open(token, {}, second.url);
    try {
      await until(() => activeListeners() > 0);
      const id = await createOrder(token);
      expect((await stream.next())!.event).toMatchObject({ type: 'order.created', subjectId: id });
    } finally {
      stream.close();
    }
  });
  test('a resumed stream gets each missed event once, though its bus is behind the replay', async () => {
    // A bus that polls only when told: a bystander's stream keeps its run, and its cursor,
    // from before the orders below, which another instance creates.
    const db = secondDb ?? api.database.db;
    const bus = createEventBus({
      events: createEventsRepo(db),
      pollMs: 3_600_000,
      onError: () => undefined,
    });
    const lagging = await startApiServer(api.config, {
      db,
      logger: pino({ level: 'silent' }),
      eventBus: bus,
    });
    const token = await api.token('s-lagging', ['editor']);
    const bystander = await open(await api.token('s-bystander', ['editor']), {}, lagging.url);
    try {
      await bus.poll();
      const missed = [await createOrder(token), await createOrder(token)];
      const stream = await open(token, { 'last-event-id': '0' }, lagging.url);
      try {
        const replayed = [await stream.next(), await stream.next()];
        expect(replayed.map((f) => f!.event.subjectId)).toEqual(missed);
        // The bus now reads the two orders: they were sent already, and are not sent again.
        await bus.poll();
        const live = await createOrder(token);
        // Polled until read: on PostgreSQL a transaction of another test file on the same
        // server holds the gap-free read back (pg_snapshot_xmin is cluster-wide).
        const polling = setInterval(() => void bus.poll(), 50);
        try {
          expect((await stream.next())!.event.subjectId).toBe(live);
        } finally {
          clearInterval(polling);
        }
      } finally {
        stream.close();
      }
    } finally {
      bystander.close();
      await lagging.close();
    }
  });
});

describe('a revoked credential’s streams end within about a second, on every instance', () => {
  // A heartbeat of a minute: only the revocation itself can end the streams in time.
  let origin: TestApi;
  let other: RunningApiServer;
  let otherDb: Db | undefined;
  let otherDenyList: SharedDenyList;
  const measured: Record<string, number[]> = {};

  beforeAll(async () => {
    origin = await startTestApi({ env: { EVENTS_POLL_MS: '50', STREAM_HEARTBEAT_MS: '60000' } });
    expect(origin.config.streams.heartbeatMs).toBe(60_000);
    // The other instance as another process would be: its own pool on PostgreSQL, and a
    // deny list that hears of revocations only by polling the table (no shared bus).
    otherDb = origin.database.url ? createDb({ databaseUrl: origin.database.url }) : undefined;
    otherDenyList = createSharedDenyList({
      db: otherDb ?? origin.database.db,
      onError: rethrow,
      bus: new EventEmitter(),
    });
    await otherDenyList.start();
    other = await startApiServer(origin.config, {
      db: otherDb ?? origin.database.db,
      logger: pino({ level: 'silent' }),
      denyList: otherDenyList,
    });
  });
  afterAll(async () => {
    console.log(
      `revoked streams ended after (ms, [instance revoked through, other instance]): ${JSON.stringify(measured)}`,
    );
    await other.close();
    await otherDenyList.close();
    await otherDb?.destroy();
    await origin.close();
  });

  /**
   * Opens a stream with `headers` on each instance, runs `revoke`, and records how long
   * each stream took to end (bounded generously for a loaded machine).
   */
  async function endsOnBoth(
    name: string,
    headers: Record<string, string>,
    revoke: () => Promise<void>,
  ): Promise<void> {
    const streams = [
      await SseReader.open(`${origin.url}/stream`, headers),
      await SseReader.open(`${other.url}/stream`, headers),
    ];
    try {
      expect(streams.map((s) => s.response.status)).toEqual([200, 200]);
      const started = Date.now();
      await revoke();
      measured[name] = await Promise.all(
        streams.map(async (stream) => {
          expect(await stream.ended()).toBe(true);
          return Date.now() - started;
        }),
      );
    } finally {
      for (const s of streams) s.close();
    }
  }

  test('cookie session: POST /logout; the user’s other session keeps its stream', async () => {
    const user = await makeUser(origin.database.db, ['viewer']);
    const sid = sidOf(await login(origin, user.email))!;
    const otherSid = sidOf(await login(origin, user.email))!;
    const bystander = await SseReader.open(`${other.url}/stream`, { cookie: `sid=${otherSid}` });
    try {
      await endsOnBoth('cookie, logout', { cookie: `sid=${sid}` }, async () => {
        const reply = await origin.request('POST', '/logout', { headers: withSession(sid) });
        expect(reply.status).toBe(204);
      });
      expect(await bystander.ended(500)).toBe(false);
    } finally {
      bystander.close();
    }
  });

  test('cookie session: POST /logout/all', async () => {
    const user = await makeUser(origin.database.db, ['viewer']);
    const sid = sidOf(await login(origin, user.email))!;
    await endsOnBoth('cookie, logout/all', { cookie: `sid=${sid}` }, async () => {
      const reply = await origin.request('POST', '/logout/all', { headers: withSession(sid) });
      expect(reply.status).toBe(204);
    });
  });

  test('bearer token: POST /logout/all; another user’s stream stays open', async () => {
    const user = await makeUser(origin.database.db, ['viewer']);
    const token = await origin.tokenFor(user);
    const bystander = await SseReader.open(`${other.url}/stream`, {
      authorization: `Bearer ${await origin.tokenFor(await makeUser(origin.database.db))}`,
    });
    try {
      await endsOnBoth('bearer, logout/all', { authorization: `Bearer ${token}` }, async () => {
        expect((await origin.request('POST', '/logout/all', { token })).status).toBe(204);
      });
      expect(await bystander.ended(500)).toBe(false);
    } finally {
      bystander.close();
    }
  });

  test('bearer token: its grant revoked (refresh-token reuse, written by the auth server)', async () => {
    const token = await origin.tokenFor(await makeUser(origin.database.db, ['viewer']));
    const { grant_id: grantId, exp } = claimsOf(token) as { grant_id: string; exp: number };
    expect(grantId).toEqual(expect.any(String));
    await endsOnBoth('bearer, grant revoked', { authorization: `Bearer ${token}` }, async () => {
      // As the auth server does: another process, so both instances learn of it by polling.
      const authServerList = createSharedDenyList({
        db: otherDb ?? origin.database.db,
        onError: rethrow,
        bus: new EventEmitter(),
      });
      await authServerList.denyGrant(grantId, exp);
      await authServerList.close();
    });
  });

  test('API key: DELETE /api-keys/:id', async () => {
    const owner = await origin.tokenFor(await makeUser(origin.database.db, ['admin']));
    const created = await origin.request('POST', '/api-keys', {
      token: owner,
      body: { name: 'stream', permissions: ['events:read'] },
    });
    expect(created.status).toBe(201);
    const { id, key } = created.body as { id: string; key: string };
    await endsOnBoth('API key, deleted', { authorization: `Bearer ${key}` }, async () => {
      expect((await origin.request('DELETE', `/api-keys/${id}`, { token: owner })).status).toBe(
        204,
      );
    });
  });
});
