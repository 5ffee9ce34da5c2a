import type Router from '@koa/router';

/** What of a router layer the index reads. */
interface IndexedLayer {
  path: string | RegExp;
}

/** Characters that make a path segment a pattern rather than literal text. */
const PATTERN = /[:*{}()[\]\\?+]/;

/** The lowercased literal first segment of a route path, or undefined for a pattern. */
function literalHead(path: string | RegExp): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
  const head = path.slice(1).split('/', 1)[0]!;
  return PATTERN.test(head) ? undefined : head.toLowerCase();
}

/** Tries only the layers whose literal first segment could match; every answer stays the same. */
export function indexRoutesByFirstSegment<S, C>(router: Router<S, C>): Router<S, C> {
  const stack = router.stack as unknown as IndexedLayer[];
  const patterns = stack.filter((layer) => literalHead(layer.path) === undefined);
  const byHead = new Map<string, IndexedLayer[]>();
  for (const head of new Set(stack.map((layer) => literalHead(layer.path)))) {
    if (head === undefined) continue;
    // Router order is kept: a route registered first still matches first.
    byHead.set(
      head,
      stack.filter((layer) => {
        const own = literalHead(layer.path);
        return own === undefined || own === head;
      }),
    );
  }
  // The router's own method, from its prototype: called on a stand-in holding the index.
  const match = router.match;
  router.match = function matchIndexed(path: string, method: string) {
    const end = path.indexOf('/', 1);
    const head = (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
    // The router's match reads nothing of the router but its stack.
    return match.call({ stack: byHead.get(head) ?? patterns } as never, path, method);
  } as unknown as typeof router.match;
  return router;
}

/** The paths routers serve, as declared (`/interaction/:uid/login`): what the fuzz test tries. */
export function routePaths(...routers: { stack: { path: string | RegExp }[] }[]): string[] {
  return [...new Set(routers.flatMap((r) => r.stack.map((layer) => String(layer.path))))];
}
