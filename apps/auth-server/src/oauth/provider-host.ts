import type Koa from 'koa';
import type { Middleware } from 'koa';
import Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { ClientAuthLimiter } from './client-auth-limits.js';
import { providerConfiguration, type ProviderSetup } from './configuration.js';
import { extendProvider } from './extensions.js';
import type { GrantEventDeps } from './grant-events.js';
import type { KeyManager, KeyRing } from './keys.js';
import { accessTokenKey } from './claims.js';
import { supportedScopes } from './internals.js';

/** TRUST_PROXY: ctx.ip is the right-most X-Forwarded-For entry, the one the proxy appended. */
export function trustProxyAs(app: Koa, trustProxy: boolean): void {
  app.proxy = trustProxy;
  app.maxIpsCount = 1;
}

export interface ProviderHost {
  readonly current: Provider;
  readonly keys: KeyRing;
  /** Reloads the keys and swaps in a new Provider when they changed (also at a key's change). */
  refreshKeys(): Promise<boolean>;
  close(): void;
  /** Koa middleware running the current Provider (requests in flight keep theirs). */
  middleware: Middleware;
}

export interface ProviderHostOptions {
  issuer: string;
  setup: Omit<ProviderSetup, 'keys'>;
  keyManager: KeyManager;
  events: GrantEventDeps;
  logger: Logger;
  /** Failed client authentications (CLIENT_AUTH_*); none: unlimited. */
  clientAuthLimiter?: ClientAuthLimiter;
  /** Milliseconds clock the key states are computed with; default Date.now. */
  now?: () => number;
}

function build(issuer: string, setup: ProviderSetup, options: ProviderHostOptions): Provider {
  const provider = new Provider(issuer, providerConfiguration(setup));
  trustProxyAs(provider, setup.config.trustProxy);
  setup.registry.follow(supportedScopes(provider));
  extendProvider(provider, {
    clients: setup.clients,
    oidcPayloads: setup.oidcPayloads,
    apiTokens: {
      issuer,
      apiAudience: setup.config.apiAudience,
      keys: setup.keys,
      denyList: setup.denyList,
    },
    events: options.events,
    clientAuthLimiter: options.clientAuthLimiter,
    pages: setup.pages,
    tokenExchange: {
      registry: setup.registry,
      accounts: setup.accounts,
      accessTokenTtl: setup.config.accessTokenTtl,
      signingKey: (client, alg) => accessTokenKey(setup.keys, client, alg),
    },
  });
  return provider;
}

/** oidc-provider takes its keys at construction, so a key rotation swaps in a new Provider. */
export async function createProviderHost(options: ProviderHostOptions): Promise<ProviderHost> {
  let keys = await options.keyManager.load();
  let current = build(options.issuer, { ...options.setup, keys }, options);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const now = options.now ?? Date.now;

  const middleware: Middleware = function oidcProvider(ctx, next) {
    // The provider's `scopes` follow the registered APIs before it reads them.
    options.setup.registry.refresh();
    const stack = current.middleware;
    const dispatch = (i: number): Promise<void> => {
      const fn = stack[i];
      if (!fn) return next();
      return Promise.resolve(fn(ctx as never, () => dispatch(i + 1)));
    };
    return dispatch(0);
  };

  // Serialized: a slow periodic reload must not overwrite the one a rotation triggered.
  let queue: Promise<unknown> = Promise.resolve();
  function refreshKeys(): Promise<boolean> {
    const run = queue.then(reload, reload);
    queue = run.catch(() => undefined);
    return run;
  }

  async function reload(): Promise<boolean> {
    const next = await options.keyManager.load();
    schedule(next);
    if (next.fingerprint === keys.fingerprint) return false;
    const provider = build(options.issuer, { ...options.setup, keys: next }, options);
    keys = next;
    current = provider;
    options.logger.info(
      { kid: next.current.kid, alg: next.current.alg, keys: Object.fromEntries(next.states) },
      'signing keys reloaded',
    );
    return true;
  }

  /** A key activates or retires at a known instant: reload right then, not at the next poll. */
  function schedule(ring: KeyRing): void {
    clearTimeout(timer);
    timer = undefined;
    if (closed || ring.nextChangeAt === undefined) return;
    // setTimeout holds at most 2^31-1 ms; the periodic reload covers anything further out.
    const delay = Math.min(Math.max(ring.nextChangeAt - now(), 0) + 20, 2 ** 31 - 1);
    timer = setTimeout(() => {
      refreshKeys().catch((e: unknown) =>
        options.logger.error({ err: e }, 'scheduled key reload failed'),
      );
    }, delay);
    timer.unref();
  }
  schedule(keys);

  return {
    get current() {
      return current;
    },
    get keys() {
      return keys;
    },
    middleware,
    refreshKeys,
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
