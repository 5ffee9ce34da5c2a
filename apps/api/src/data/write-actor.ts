import { AsyncLocalStorage } from 'node:async_hooks';

// The actors of the request being served (RFC 8693 `act`), read where every write records its
// event, so no repository signature has to carry them (README "Token exchange (RFC 8693)").
const actors = new AsyncLocalStorage<readonly string[]>();

/** Runs `fn` with the request's delegation chain (client ids, the latest actor first). */
export function withWriteActor<T>(chain: readonly string[], fn: () => Promise<T>): Promise<T> {
  return chain.length > 0 ? actors.run(chain, fn) : fn();
}

/** The chain of the request in progress; undefined when the user's own client is calling. */
export function currentWriteActor(): readonly string[] | undefined {
  return actors.getStore();
}
