import Provider from 'oidc-provider';

const memos = new WeakMap<object, Map<string, Promise<unknown>>>();
const asides = new WeakMap<object, Map<string, unknown>>();

/** The request oidc-provider is handling (its AsyncLocalStorage), if any. */
export function currentRequest(): object | undefined {
  return (Provider as unknown as { ctx?: object }).ctx;
}

/** The current request's map in `store`, made on first use; undefined outside a request. */
function ofRequest<V>(store: WeakMap<object, Map<string, V>>): Map<string, V> | undefined {
  const request = currentRequest();
  if (!request) return undefined;
  let map = store.get(request);
  if (!map) store.set(request, (map = new Map()));
  return map;
}

/**
 * One load per key within one request; nothing outlives it, outside a request every call loads.
 * A failed load is retried on the next call unless `keepFailure` (a slow fetch that timed out).
 */
export function memoizeInRequest<T>(
  key: string,
  load: () => Promise<T>,
  { keepFailure = false } = {},
): Promise<T> {
  const memo = ofRequest(memos);
  if (!memo) return load();
  let value = memo.get(key) as Promise<T> | undefined;
  if (!value) {
    value = load();
    memo.set(key, value);
    value.catch(() => {
      if (!keepFailure) memo.delete(key);
    });
  }
  return value;
}

const accountKey = (id: string) => `account:${id}`;

/** The account `id` loaded once per request (findAccount, extraTokenClaims and the ID token). */
export function memoizedAccount<T>(id: string, load: () => Promise<T>): Promise<T> {
  return memoizeInRequest(accountKey(id), load);
}

/** An account already read in this request (with its token, by the OIDC adapter). */
export function rememberAccount(id: string, account: unknown): void {
  void memoizeInRequest(accountKey(id), () => Promise.resolve(account));
}

/** Puts a value aside for one later `takeAside` in this request (the adapter's grant, session). */
export function putAside(key: string, value: unknown): void {
  ofRequest(asides)?.set(key, value);
}

/** The value put aside under `key` in this request, once; `undefined` when there is none. */
export function takeAside<T>(key: string): { value: T } | undefined {
  const request = currentRequest();
  const aside = request && asides.get(request);
  if (!aside?.has(key)) return undefined;
  const value = aside.get(key) as T;
  aside.delete(key);
  return { value };
}

/** Drops everything put aside in this request (after a write, so no stale read is served). */
export function dropAsides(): void {
  const request = currentRequest();
  if (request) asides.delete(request);
}
