import { EventEmitter } from 'node:events';

/** The claims a deny-list decision reads; verified AccessTokenClaims fit. */
export interface DenyCheckInput {
  jti?: string | undefined;
  grant_id?: string | undefined;
  grantId?: string | undefined;
  sub?: string | undefined;
  iat?: number | undefined;
  /**
   * When the token's grant was created, Unix seconds with milliseconds. A logout
   * everywhere cuts off by it when present: `iat` has whole seconds only, and a token of a
   * grant from before the logout must not pass because it was minted after it.
   */
  grant_iat?: number | undefined;
}

/** A revocation as the deny list records it. Times are Unix seconds. */
export interface RevocationEntry {
  kind: 'jti' | 'grant' | 'subject';
  /** The token id, grant id or subject. */
  value: string;
  /** A logout's instant, with its milliseconds; null for tokens and grants. */
  before: number | null;
  expiresAt: number;
}

/** An entry as a store returns it, with the store's id (increasing in insert order). */
export interface StoredRevocation extends RevocationEntry {
  id: number;
}

/**
 * What a deny list needs to share revocations across instances. Declared here, so claims
 * depends on no database; packages/db's createRevocationStore (the `revocations` table)
 * has this shape.
 */
export interface RevocationStore {
  insert(entry: RevocationEntry): Promise<void>;
  /**
   * Unexpired entries with an id above `afterId`, in id order, `limit` at most. With
   * `recent`, also those stored in the last few seconds whatever their id: a store may
   * make a lower id visible after a higher one was read (ids taken at insert, seen at
   * commit), and the list must not miss it.
   */
  readAfter(
    afterId: number,
    options: { recent: boolean; limit: number },
  ): Promise<StoredRevocation[]>;
  /** Drops entries long expired; the list calls it every `purgeIntervalMs`. */
  purgeExpired(): Promise<void>;
}

/**
 * Revoked tokens, grants and subjects, mirrored in memory so `isDenied` costs a few Map
 * lookups per request. All times are Unix seconds; a logout's instant and an issue time
 * may carry a fraction (milliseconds), and are compared with it.
 */
export interface DenyList {
  /** Synchronous and in-memory: safe on every request. */
  isDenied(claims: DenyCheckInput): boolean;
  /** Denies one token until `expiresAt` (its `exp`). */
  denyToken(jti: string, expiresAt: number): Promise<void>;
  /** Denies every token carrying `grant_id` = grantId (refresh-token reuse, RFC 9700 §4.14). */
  denyGrant(grantId: string, expiresAt: number): Promise<void>;
  /** Logout everywhere at `before` (with its milliseconds): denies tokens issued before it. */
  denySubject(subject: string, before: number, expiresAt: number): Promise<void>;
  /** Loads unexpired rows, then polls for new ones. */
  start(): Promise<void>;
  /**
   * Calls `listener` with each revocation as this list learns of it (written here, by
   * another list of this process through the bus, or by another instance: the next
   * poll), once: so holders of long-lived credentials (event streams) can recheck them at
   * once instead of at their next periodic check. Returns the unsubscribe function.
   */
  onRevocation(listener: (revocation: Revocation) => void): () => void;
  /**
   * One poll now. With `fresh`, the poll is one that starts after this call, so every row
   * committed before it is seen (a poll already under way may have begun earlier).
   */
  sync(options?: { fresh?: boolean }): Promise<void>;
  close(): Promise<void>;
  /** Milliseconds time of the last successful poll; readiness checks can alert on staleness. */
  readonly lastSyncedAt: number | undefined;
  /** Entries held in memory (tokens, grants and subjects), for the `deny_list_entries` gauge. */
  size(): number;
}

export interface DenyListOptions {
  /**
   * The shared store (createRevocationStore of @portcullis/db in the apps). Without one
   * the list is per-process (tests, a single instance). With one, the list denies every
   * token until its first load (start): an unloaded list cannot vouch for any.
   */
  store?: RevocationStore;
  /** Default 250 ms: a revocation reaches every instance within about a second. */
  pollIntervalMs?: number;
  /** Default 10 min. */
  purgeIntervalMs?: number;
  /**
   * In-process fan-out between the started lists of one process (the auth server and the
   * API under `npm start`); defaults to a module-wide bus. A list listens from start() to
   * close(), so one that is only written through holds no listener.
   */
  bus?: EventEmitter;
  now?: () => number;
  onError?: (error: unknown) => void;
}

/** What was revoked: a token id (`jti`), a grant, or a subject's earlier tokens. */
export interface Revocation {
  kind: RevocationEntry['kind'];
  value: string;
}

const defaultBus = new EventEmitter().setMaxListeners(0);
const EVENT = 'revocation';
const PAGE = 5000;

function checkTime(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be Unix seconds`);
}

/**
 * The rule of a subject revocation (logout everywhere at `before`): a token issued before
 * it is revoked, and so is one without `iat` (no proof it postdates the logout). Both are
 * compared with the precision they carry (milliseconds where known): an issue time in
 * whole seconds must be given as the start of its second, so that ambiguity revokes.
 */
export function predatesLogout(iat: number | undefined, before: number): boolean {
  return iat === undefined || iat < before;
}

/** Creates a deny list, shared across instances through `store` when given. */
export function createDenyList(options: DenyListOptions = {}): DenyList {
  const { store } = options;
  const pollInterval = options.pollIntervalMs ?? 250;
  const purgeInterval = options.purgeIntervalMs ?? 10 * 60_000;
  const bus = options.bus ?? defaultBus;
  const now = options.now ?? Date.now;
  const onError = options.onError ?? ((error: unknown) => console.error('deny list:', error));

  const jtis = new Map<string, number>();
  const grants = new Map<string, number>();
  const subjects = new Map<string, { before: number; expiresAt: number }>();
  let lastSeenId = 0;
  let lastSyncedAt: number | undefined;
  let polling: Promise<void> | undefined;
  let timers: NodeJS.Timeout[] = [];

  const listeners = new Set<(revocation: Revocation) => void>();

  /** Adds the entry; true when it denies something the list did not deny already. */
  function apply(e: RevocationEntry): boolean {
    if (e.expiresAt <= now() / 1000) return false;
    if (e.kind === 'jti' || e.kind === 'grant') {
      const map = e.kind === 'jti' ? jtis : grants;
      const known = map.get(e.value);
      map.set(e.value, Math.max(known ?? 0, e.expiresAt));
      return known === undefined;
    }
    if (e.kind === 'subject' && e.before !== null) {
      const old = subjects.get(e.value);
      subjects.set(e.value, {
        before: Math.max(old?.before ?? 0, e.before),
        expiresAt: Math.max(old?.expiresAt ?? 0, e.expiresAt),
      });
      return old === undefined || e.before > old.before;
    }
    return false;
  }

  /** Applies the entry and, if it is news (polls reread recent rows), tells the listeners. */
  function learn(e: RevocationEntry): void {
    if (!apply(e)) return;
    for (const listener of listeners) {
      try {
        listener({ kind: e.kind, value: e.value });
      } catch (error) {
        onError(error);
      }
    }
  }
  const onBus = (e: RevocationEntry) => learn(e);

  async function record(e: RevocationEntry): Promise<void> {
    checkTime('expiresAt', e.expiresAt);
    if (e.before !== null) checkTime('before', e.before);
    if (typeof e.value !== 'string' || e.value.length === 0) throw new TypeError('value required');
    // Locally first: even if the write fails, this process honours the revocation.
    learn(e);
    bus.emit(EVENT, e);
    await store?.insert(e);
  }

  async function poll(): Promise<void> {
    if (store) {
      let recent = true;
      for (;;) {
        const rows = await store.readAfter(lastSeenId, { recent, limit: PAGE });
        for (const { id, ...entry } of rows) {
          if (id > lastSeenId) lastSeenId = id;
          learn(entry);
        }
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
    const nowSec = now() / 1000;
    for (const map of [jtis, grants]) for (const [k, exp] of map) if (exp <= nowSec) map.delete(k);
    for (const [k, s] of subjects) if (s.expiresAt <= nowSec) subjects.delete(k);
    await store?.purgeExpired();
  }

  return {
    isDenied(c) {
      if (store && lastSyncedAt === undefined) return true;
      if (c.jti !== undefined && jtis.has(c.jti)) return true;
      const grantId = c.grant_id ?? c.grantId;
      if (grantId !== undefined && grants.has(grantId)) return true;
      if (c.sub !== undefined) {
        const s = subjects.get(c.sub);
        if (s && predatesLogout(c.grant_iat ?? c.iat, s.before)) return true;
      }
      return false;
    },
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
    size: () => jtis.size + grants.size + subjects.size,
  };
}
