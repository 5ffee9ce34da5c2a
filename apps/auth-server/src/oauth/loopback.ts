/** Host names of this very machine: http to them never leaves it (development, tests). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Loopback IP literals a native app may listen on (RFC 8252 §7.3, §8.3: not `localhost`). */
export const LOOPBACK_IPS: ReadonlySet<string> = new Set(
  [...LOOPBACK_HOSTS].filter((host) => host !== 'localhost'),
);

/** https, or http to a loopback host unless `httpsOnly` (production's jwks_uri). */
export function isHttpsOrLoopback(uri: unknown, { httpsOnly = false } = {}): boolean {
  const url = URL.parse(String(uri));
  if (!url) return false;
  if (url.protocol === 'https:') return true;
  return !httpsOnly && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}
