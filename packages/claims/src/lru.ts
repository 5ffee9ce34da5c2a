/** A bounded map that forgets its least recently used entry first. */
export interface Lru<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  delete(key: K): void;
  clear(): void;
  readonly size: number;
}

interface Slot<V> {
  value: V;
  /** When the entry was last put at the end of the eviction order. */
  seq: number;
}

// A hit moves its entry only once in the older half: a move per hit made V8 rehash again and again.
export function createLru<K, V>(maxEntries: number): Lru<K, V> {
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError('maxEntries must be a positive integer');
  }
  const halfLife = Math.ceil(maxEntries / 2);
  const slots = new Map<K, Slot<V>>();
  let seq = 0;
  const moveToEnd = (key: K, slot: Slot<V>) => {
    slots.delete(key);
    slot.seq = ++seq;
    slots.set(key, slot);
  };
  return {
    get(key) {
      const slot = slots.get(key);
      if (slot === undefined) return undefined;
      if (seq - slot.seq >= halfLife) moveToEnd(key, slot);
      return slot.value;
    },
    set(key, value) {
      moveToEnd(key, { value, seq: 0 });
      if (slots.size > maxEntries) {
        const oldest = slots.keys().next();
        if (!oldest.done) slots.delete(oldest.value);
      }
    },
    delete(key) {
      slots.delete(key);
    },
    clear() {
      slots.clear();
    },
    get size() {
      return slots.size;
    },
  };
}
