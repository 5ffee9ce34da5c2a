import { hash, randomBytes } from 'node:crypto';
import type { DpopReplayStore } from './dpop.js';

export interface MemoryReplayStoreOptions {
  /** Default 500,000; when every entry is live, claims fail (503) rather than forget one. */
  maxEntries?: number;
  /** Once half full, an owner holding this many live entries gets no more. Default maxEntries / 100. */
  maxEntriesPerOwner?: number;
  now?: () => number;
}

// A slot: three words of the id, its owner's number + 1 (0: empty), the expiry (float64).
const SLOT = 6;
// A sweep record: the slot's four words and the expiry it was claimed with.
const RECORD = 6;
const FIRST_SIZE = 1024;

/** Flat typed arrays: no object per entry for the garbage collector to move or mark. */
interface Table {
  words: Int32Array;
  expiries: Float64Array;
  mask: number;
  seed: number;
}

// 6 bits a character, -1 for any other.
const BASE64URL_VALUES = new Int8Array(128).fill(-1);
for (const [i, c] of [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
].entries()) {
  BASE64URL_VALUES[c.charCodeAt(0)] = i;
}

/** Where an id's run starts; keyed by `seed`, so no client can aim its ids at one run. */
function homeOf(table: Table, word: number, owner: number): number {
  let h = Math.imul(word ^ table.seed, 0x9e3779b1) ^ Math.imul(owner, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) & table.mask;
}

function createTable(slots: number, seed: number): Table {
  const words = new Int32Array(slots * SLOT);
  return { words, expiries: new Float64Array(words.buffer), mask: slots - 1, seed };
}

/** The slot holding the entry `from[at..at+3]`, or minus one minus the empty slot where it goes. */
function find(table: Table, from: Int32Array, at: number): number {
  const { words, mask } = table;
  const d0 = from[at]!;
  const d1 = from[at + 1]!;
  const d2 = from[at + 2]!;
  const owner = from[at + 3]!;
  for (let slot = homeOf(table, d0, owner); ; slot = (slot + 1) & mask) {
    const base = slot * SLOT;
    const held = words[base + 3];
    if (held === 0) return -slot - 1;
    if (held === owner && words[base] === d0 && words[base + 1] === d1 && words[base + 2] === d2)
      return slot;
  }
}

/** One instance's proof `jti`s; several instances need a shared store, or a replay passes elsewhere. */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): DpopReplayStore {
  const maxEntries = options.maxEntries ?? 500_000;
  const perOwner = options.maxEntriesPerOwner ?? Math.max(1, Math.floor(maxEntries / 100));
  const busy = Math.ceil(maxEntries / 2);
  const now = options.now ?? Date.now;
  const seed = randomBytes(4).readInt32LE();
  const salt = randomBytes(16).toString('base64url');
  // The entry being claimed: the id's words, then its owner's number + 1.
  const key = new Int32Array(4);
  // The verifier's ids are a jti's SHA-256 in base64url: 90 of its bits are the key as they are.
  const idWords = (id: string) => {
    if (id.length === 43) {
      let valid = true;
      for (let i = 0; i < 3; i++) {
        let word = 0;
        for (let j = 5 * i; j < 5 * i + 5; j++) {
          const value = BASE64URL_VALUES[id.charCodeAt(j)] ?? -1;
          valid &&= value >= 0;
          word = (word << 6) | value;
        }
        key[i] = word;
      }
      if (valid) return;
    }
    // Any other id: 96 bits of a keyed SHA-256, bit 30 set so it never equals 90 bits as they are.
    const bytes = hash('sha256', `${salt}${id}`, 'binary');
    for (let i = 0; i < 3; i++) {
      key[i] =
        bytes.charCodeAt(4 * i) |
        (bytes.charCodeAt(4 * i + 1) << 8) |
        (bytes.charCodeAt(4 * i + 2) << 16) |
        (bytes.charCodeAt(4 * i + 3) << 24);
    }
    key[0] = key[0]! | 0x40000000;
  };

  let table = createTable(FIRST_SIZE, seed);
  let size = 0;
  const put = (slot: number, expiresAt: number) => {
    table.words.set(key, slot * SLOT);
    table.expiries[slot * (SLOT / 2) + 2] = expiresAt;
  };
  // Linear probing's deletion: later entries of the run move back, so no lookup stops early.
  function remove(slot: number): void {
    const { words, mask } = table;
    release(words[slot * SLOT + 3]! - 1);
    size--;
    let hole = slot;
    for (let next = (slot + 1) & mask; words[next * SLOT + 3] !== 0; next = (next + 1) & mask) {
      const home = homeOf(table, words[next * SLOT]!, words[next * SLOT + 3]!);
      // It stays when its home lies cyclically in (hole, next].
      if (hole <= next ? home > hole && home <= next : home > hole || home <= next) continue;
      words.copyWithin(hole * SLOT, next * SLOT, next * SLOT + SLOT);
      hole = next;
    }
    words.fill(0, hole * SLOT, hole * SLOT + SLOT);
  }
  function grow(): void {
    const old = table;
    table = createTable((old.mask + 1) * 2, seed);
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
      idWords(id);
      key[3] = (ownerIds.get(owner) ?? -1) + 1;
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
      const owned = ownerId(owner);
      key[3] = owned + 1;
      slot = -find(table, key, 0) - 1;
      const expiresAt = at + ttlMs;
      held[owned]!++;
      size++;
      put(slot, expiresAt);
      enqueue(expiresAt);
      return Promise.resolve(true);
    },
  };
}
