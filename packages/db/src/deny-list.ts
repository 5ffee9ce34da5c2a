import { EventEmitter } from 'node:events';
import {
  createDenyList,
  type DenyList,
  type Revocation,
  type RevocationEntry,
} from '@portcullis/claims';
import type { Db } from './create-db.js';
import { createRevocationStore } from './revocations.js';

/** The claims deny list kept in step with `revocations`: every instance learns within about a second. */
export interface SharedDenyList extends Pick<DenyList, 'isDenied' | 'size'> {
  denyToken(jti: string, expiresAt: number): Promise<void>;
  /** Denies every token carrying `grant_id` = grantId (refresh-token reuse, RFC 9700 §4.14). */
  denyGrant(grantId: string, expiresAt: number): Promise<void>;
  /** Logout everywhere at `before` (with its milliseconds): denies tokens issued before it. */
  denySubject(subject: string, before: number, expiresAt: number): Promise<void>;
  start(): Promise<void>;
  /** Each revocation once, as learnt, so long-lived credentials (streams) are rechecked at once. */
  onRevocation(listener: (revocation: Revocation) => void): () => void;
  /** One poll now; `fresh` waits for one that starts after the call and sees every earlier commit. */
  sync(options?: { fresh?: boolean }): Promise<void>;
  close(): Promise<void>;
  /** Milliseconds time of the last successful poll; readiness checks can alert on staleness. */
  readonly lastSyncedAt: number | undefined;
}

export interface SharedDenyListOptions {
  /** Shared `revocations`; with one, every token is denied until the first load (fail closed). */
  db?: Db | undefined;
  /** Default 250 ms: a revocation reaches every instance within about a second. */
  pollIntervalMs?: number;
  purgeIntervalMs?: number;
  /** In-process fan-out between the lists of one process; by default one per `db` object. */
  bus?: EventEmitter;
  now?: () => number;
  onError: (error: unknown) => void;
}

const EVENT = 'revocation';
const PAGE = 5000;
/** One bus per database handle: lists over one handle live in one process. */
const busOfDb = new WeakMap<Db, EventEmitter>();

function busFor(db: Db | undefined): EventEmitter {
  if (db === undefined) return new EventEmitter();
  let bus = busOfDb.get(db);
  if (!bus) busOfDb.set(db, (bus = new EventEmitter().setMaxListeners(0)));
  return bus;
}

function checkTime(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be Unix seconds`);
}

export function createSharedDenyList(options: SharedDenyListOptions): SharedDenyList {
  const { db, onError } = options;
  const store = db ? createRevocationStore(db) : undefined;
  const pollInterval = options.pollIntervalMs ?? 250;
  const purgeInterval = options.purgeIntervalMs ?? 10 * 60_000;
  const bus = options.bus ?? busFor(db);
  const now = options.now ?? Date.now;
  const list = createDenyList({ now });

  let lastSeenId = 0;
  let lastSyncedAt: number | undefined;
  let polling: Promise<void> | undefined;
  let timers: NodeJS.Timeout[] = [];
  const listeners = new Set<(revocation: Revocation) => void>();

  function learn(entries: RevocationEntry[]): void {
    for (const revocation of list.apply(entries)) {
      for (const listener of listeners) {
        try {
          listener(revocation);
        } catch (error) {
          onError(error);
        }
      }
    }
  }
  const onBus = (e: RevocationEntry) => learn([e]);

  async function record(e: RevocationEntry): Promise<void> {
    checkTime('expiresAt', e.expiresAt);
    if (e.before !== null) checkTime('before', e.before);
    if (typeof e.value !== 'string' || e.value.length === 0) throw new TypeError('value required');
    // Locally first: even if the write fails, this process honours the revocation.
    learn([e]);
    bus.emit(EVENT, e);
    await store?.insert(e);
  }

  async function poll(): Promise<void> {
    if (store) {
      let recent = true;
      for (;;) {
        const rows = await store.readAfter(lastSeenId, { recent, limit: PAGE });
        const entries: RevocationEntry[] = [];
        for (const { id, ...entry } of rows) {
          if (id > lastSeenId) lastSeenId = id;
          entries.push(entry);
        }
        learn(entries);
        if (rows.length < PAGE) break;
        recent = false;
      }
    }
    lastSyncedAt = now();
  }

  function sync(options: { fresh?: boolean } = {}): Promise<void> {
    if (options.fresh && polling) return polling.then(() => sync());
    polling ??= poll().finally(() => {
      polling = undefined;
    });
    return polling;
  }

  async function purge(): Promise<void> {
    list.prune();
    await store?.purgeExpired();
  }

  return {
    isDenied: (claims) =>
      (store !== undefined && lastSyncedAt === undefined) || list.isDenied(claims),
    size: () => list.size(),
    denyToken: (jti, expiresAt) => record({ kind: 'jti', value: jti, before: null, expiresAt }),
    denyGrant: (grantId, expiresAt) =>
      record({ kind: 'grant', value: grantId, before: null, expiresAt }),
    denySubject: (subject, before, expiresAt) =>
      record({ kind: 'subject', value: subject, before, expiresAt }),
    async start() {
      if (timers.length > 0) return;
      bus.off(EVENT, onBus).on(EVENT, onBus);
      await sync();
      const tick = () => void sync().catch(onError);
      const sweep = () => void purge().catch(onError);
      timers = [setInterval(tick, pollInterval), setInterval(sweep, purgeInterval)];
      for (const t of timers) t.unref();
    },
    sync,
    onRevocation(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      for (const t of timers) clearInterval(t);
      timers = [];
      bus.off(EVENT, onBus);
      listeners.clear();
      await polling?.catch(() => undefined);
    },
    get lastSyncedAt() {
      return lastSyncedAt;
    },
  };
}
