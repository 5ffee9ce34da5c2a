import { deepFreeze } from './values.js';

export interface ReadCacheOptions {
  /** How long an answer is reused, in ms; 0 or less: every read loads. */
  ttlMs: number;
  /** Most groups remembered at once; the first one read is dropped first. */
  maxGroups: number;
  /** Milliseconds clock (monotonic by default); tests may drive it. */
  now?: () => number;
}

export interface ReadCache<V> {
  /**
   * `load()`'s answer for (group, key), reused for `ttlMs`. Undefined answers and failures
   * are not kept (a row created elsewhere is found at once). Kept answers are frozen: every
   * caller within the bound gets the same object.
   */
  get(group: string, key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** Runs a write of `group`; afterwards nothing read before or during it is served. */
  write<T>(group: string, run: () => Promise<T>): Promise<T>;
}

interface Entry<V> {
  readAt: number;
  value: Promise<V | undefined>;
}

/**
 * Hot reads that may lag another instance's writes by `ttlMs` (client metadata, single
 * orders), in one place. Answers are kept per (group, key), e.g. per order and owner
 * condition, and a write drops its whole group. An entry is made when its read starts
 * and the write drops the group once it is done, so a read that overlapped the write is
 * not served afterwards.
 */
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
