import { hash, randomBytes } from 'node:crypto';
import type { DpopReplayStore } from './dpop.js';

export interface MemoryReplayStoreOptions {
  /** Default 500,000; when every entry is live, claims fail (503) rather than forget one. */
  maxEntries?: number;
  /** Once half full, an owner holding this many live entries gets no more. Default maxEntries / 100. */
  maxEntriesPerOwner?: number;
  now?: () => number;
}

// A slot: the id's 96-bit digest, its owner's number + 1 (0: empty), the expiry (float64).
const SLOT = 6;
// A sweep record: the digest, a spare word, and the expiry it was claimed with.
const RECORD = 6;
const FIRST_SIZE = 1024;

/** Flat typed arrays: no object per entry for the garbage collector to move or mark. */
interface Table {
  words: Int32Array;
  expiries: Float64Array;
  mask: number;
}

function createTable(slots: number): Table {
  const words = new Int32Array(slots * SLOT);
  return { words, expiries: new Float64Array(words.buffer), mask: slots - 1 };
}

/** The slot holding the digest at `from[at..at+2]`, or minus one minus the empty slot where it goes. */
function find(table: Table, from: Int32Array, at: number): number {
  const { words, mask } = table;
  const d0 = from[at]!;
  const d1 = from[at + 1]!;
  const d2 = from[at + 2]!;
  for (let slot = d0 & mask; ; slot = (slot + 1) & mask) {
    const base = slot * SLOT;
    if (words[base + 3] === 0) return -slot - 1;
    if (words[base] === d0 && words[base + 1] === d1 && words[base + 2] === d2) return slot;
  }
}

/** One instance's proof `jti`s; several instances need a shared store, or a replay passes elsewhere. */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): DpopReplayStore {
  const maxEntries = options.maxEntries ?? 500_000;
  const perOwner = options.maxEntriesPerOwner ?? Math.max(1, Math.floor(maxEntries / 100));
  const busy = Math.ceil(maxEntries / 2);
  const now = options.now ?? Date.now;
  // Keyed, so no client can choose the slots its ids take (long probe runs).
  const salt = randomBytes(16).toString('base64url');
  const key = new Int32Array(3);
  const digest = (owner: string, id: string) => {
    const bytes = hash('sha256', `${salt}${owner.length}.${owner}${id}`, 'binary');
    for (let i = 0; i < 3; i++) {
      key[i] =
        bytes.charCodeAt(4 * i) |
        (bytes.charCodeAt(4 * i + 1) << 8) |
        (bytes.charCodeAt(4 * i + 2) << 16) |
        (bytes.charCodeAt(4 * i + 3) << 24);
    }
  };

  let table = createTable(FIRST_SIZE);
  let size = 0;
  const put = (slot: number, from: Int32Array, at: number, owner: number, expiresAt: number) => {
    table.words.set(from.subarray(at, at + 3), slot * SLOT);
    table.words[slot * SLOT + 3] = owner + 1;
    table.expiries[slot * (SLOT / 2) + 2] = expiresAt;
  };
  // Linear probing's deletion: later entries of the run move back, so no lookup stops early.
  function remove(slot: number): void {
    const { words, mask } = table;
    release(words[slot * SLOT + 3]! - 1);
    size--;
    let hole = slot;
    for (let next = (slot + 1) & mask; words[next * SLOT + 3] !== 0; next = (next + 1) & mask) {
      const home = words[next * SLOT]! & mask;
      // It stays when its home lies cyclically in (hole, next].
      if (hole <= next ? home > hole && home <= next : home > hole || home <= next) continue;
      words.copyWithin(hole * SLOT, next * SLOT, next * SLOT + SLOT);
      hole = next;
    }
    words.fill(0, hole * SLOT, hole * SLOT + SLOT);
  }
  function grow(): void {
    const old = table;
    table = createTable((old.mask + 1) * 2);
    for (let slot = 0; slot <= old.mask; slot++) {
      const base = slot * SLOT;
      if (old.words[base + 3] === 0) continue;
      table.words.set(
        old.words.subarray(base, base + SLOT),
        (-find(table, old.words, base) - 1) * SLOT,
      );
    }
  }

  // Owners as small numbers, with their live entry counts.
  const ownerIds = new Map<string, number>();
  const ownerNames: string[] = [];
  const held: number[] = [];
  const freeIds: number[] = [];
  const ownerId = (owner: string) => {
    let id = ownerIds.get(owner);
    if (id === undefined) {
      id = freeIds.pop() ?? ownerNames.length;
      ownerIds.set(owner, id);
      ownerNames[id] = owner;
      held[id] = 0;
    }
    return id;
  };
  function release(id: number): void {
    if (--held[id]! > 0) return;
    ownerIds.delete(ownerNames[id]!);
    freeIds.push(id);
  }

  // Claims in insertion order, nearly expiry order (every TTL about the same): swept from the front.
  let records = new Int32Array(FIRST_SIZE * RECORD);
  let recordExpiries = new Float64Array(records.buffer);
  let head = 0;
  let length = 0;
  function enqueue(expiresAt: number): void {
    let capacity = records.length / RECORD;
    if (length === capacity) {
      // Unwrapped into one twice as large.
      const larger = new Int32Array(capacity * 2 * RECORD);
      larger.set(records.subarray(head * RECORD));
      larger.set(records.subarray(0, head * RECORD), (capacity - head) * RECORD);
      records = larger;
      recordExpiries = new Float64Array(larger.buffer);
      head = 0;
      capacity *= 2;
    }
    const record = (head + length++) % capacity;
    records.set(key, record * RECORD);
    recordExpiries[record * (RECORD / 2) + 2] = expiresAt;
  }
  function sweep(at: number): void {
    const capacity = records.length / RECORD;
    while (length > 0) {
      const expiresAt = recordExpiries[head * (RECORD / 2) + 2]!;
      if (expiresAt > at) break;
      const slot = find(table, records, head * RECORD);
      // Claimed again since it expired: that claim has a record of its own.
      if (slot >= 0 && table.expiries[slot * (SLOT / 2) + 2] === expiresAt) remove(slot);
      head = (head + 1) % capacity;
      length--;
    }
  }

  return {
    claim(owner, id, ttlMs) {
      const at = now();
      sweep(at);
      digest(owner, id);
      let slot = find(table, key, 0);
      if (slot >= 0) {
        if (table.expiries[slot * (SLOT / 2) + 2]! > at) return Promise.resolve(false);
        remove(slot);
      }
      if (size >= maxEntries) {
        return Promise.reject(new Error('DPoP replay store full'));
      }
      const known = ownerIds.get(owner);
      if (known !== undefined && held[known]! >= perOwner && size >= busy) {
        return Promise.reject(new Error('DPoP replay store: this key holds its share'));
      }
      // At most three quarters full, so probe runs stay short.
      if ((size + 1) * 4 > (table.mask + 1) * 3) grow();
      slot = -find(table, key, 0) - 1;
      const expiresAt = at + ttlMs;
      const owned = ownerId(owner);
      held[owned]!++;
      size++;
      put(slot, key, 0, owned, expiresAt);
      enqueue(expiresAt);
      return Promise.resolve(true);
    },
  };
}
