import { deepFreeze } from './values.js';

export interface ReadCacheOptions {
  /** How long an answer is reused, in ms; 0 or less: every read loads. */
  ttlMs: number;
  /** Most groups remembered at once; the first one read is dropped first. */
  maxGroups: number;
  now?: () => number;
}

export interface ReadCache<V> {
  /** Reused for `ttlMs`; misses and failures are not kept; kept answers are frozen and shared. */
  get(group: string, key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** Runs a write of `group`; afterwards nothing read before or during it is served. */
  write<T>(group: string, run: () => Promise<T>): Promise<T>;
}

interface Entry<V> {
  readAt: number;
  value: Promise<V | undefined>;
}

// Answers may lag other instances' writes by `ttlMs`. An entry is made when its read starts, so a
// read that overlapped a write is dropped with the write's group.
export function createReadCache<V>(options: ReadCacheOptions): ReadCache<V> {
  const { ttlMs, maxGroups } = options;
  const now = options.now ?? (() => performance.now());
  const groups = new Map<string, Map<string, Entry<V>>>();

  function forget(group: string, key: string, entry: Entry<V>): void {
    const entries = groups.get(group);
    if (entries?.get(key) !== entry) return;
    entries.delete(key);
    if (entries.size === 0) groups.delete(group);
  }

  return {
    get(group, key, load) {
      if (ttlMs <= 0) return load();
      const hit = groups.get(group)?.get(key);
      if (hit && now() - hit.readAt < ttlMs) return hit.value;
      const entry: Entry<V> = {
        readAt: now(),
        value: load().then((value) => value && deepFreeze(value)),
      };
      let entries = groups.get(group);
      if (!entries) {
        if (groups.size >= maxGroups) groups.delete(groups.keys().next().value!);
        groups.set(group, (entries = new Map()));
      }
      entries.set(key, entry);
      entry.value.then(
        (value) => {
          if (value === undefined) forget(group, key, entry);
        },
        () => forget(group, key, entry),
      );
      return entry.value;
    },
    async write(group, run) {
      try {
        return await run();
      } finally {
        groups.delete(group);
      }
    },
  };
}
