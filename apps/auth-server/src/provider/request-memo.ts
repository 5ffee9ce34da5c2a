import Provider from 'oidc-provider';

const memos = new WeakMap<object, Map<string, Promise<unknown>>>();

/** The request oidc-provider is handling (its AsyncLocalStorage), if any. */
export function currentRequest(): object | undefined {
  return (Provider as unknown as { ctx?: object }).ctx;
}

/**
 * One load per key within one request. oidc-provider reads the same account more than
 * once while handling one token request (findAccount for the grant and the ID token,
 * then extraTokenClaims for the roles); each read was a database round trip. Nothing
 * outlives the request, so a change made by the admin API is seen by the next request
 * as before. Outside a request (admin API, CLI) every call loads.
 */
export function memoizeInRequest<T>(key: string, load: () => Promise<T>): Promise<T> {
  const request = currentRequest();
  if (!request) return load();
  let memo = memos.get(request);
  if (!memo) memos.set(request, (memo = new Map()));
  let value = memo.get(key) as Promise<T> | undefined;
  if (!value) {
    value = load();
    memo.set(key, value);
    // A failed load is not remembered: a retry within the request loads again.
    value.catch(() => memo.delete(key));
  }
  return value;
}
