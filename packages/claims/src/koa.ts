// `koaAuth(server[, requirement])`: refusals answered here, other errors go on (README "Koa").
import { AuthenticationError } from './challenge.js';
import { externalUrlOf, METADATA_HEADERS, metadataEndpointOf, pathOf, refusalOf } from './http.js';
import type { Principal } from './principal.js';
import {
  authRequestOf,
  type Authentication,
  type Authenticator,
  type RouteRequirement,
} from './resource-server.js';

/** The parts of a Koa context the adapter uses (Koa 2 and 3). */
export interface KoaContextLike {
  req: {
    method?: string | undefined;
    headers: Record<string, string | string[] | undefined>;
    headersDistinct?: Record<string, string[] | undefined>;
  };
  protocol: string;
  host: string;
  originalUrl: string;
  state: { auth?: Authentication; principal?: Principal } & Record<string, unknown>;
  status: number;
  body: unknown;
  set(name: string, value: string): void;
}

export interface KoaAuthOptions extends RouteRequirement {
  /** The externally visible origin (behind a proxy), for DPoP `htu` checks. */
  publicUrl?: string | undefined;
}

export function koaAuth(server: Authenticator, options: KoaAuthOptions = {}) {
  const { publicUrl, ...requirement } = options;
  server.declareRoute?.(requirement);
  return async function portcullisAuth(
    ctx: KoaContextLike,
    next: () => Promise<unknown>,
  ): Promise<void> {
    try {
      let auth = ctx.state.auth;
      if (!auth) {
        const url = externalUrlOf(`${ctx.protocol}://${ctx.host}`, ctx.originalUrl, publicUrl);
        auth = await server.authenticate(authRequestOf(ctx.req, url), requirement);
        ctx.state.auth = auth;
        ctx.state.principal = auth.principal;
        for (const [name, value] of Object.entries(auth.headers)) ctx.set(name, value);
      }
      server.authorize(auth, requirement);
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      const refusal = refusalOf(error);
      ctx.status = refusal.status;
      for (const [name, value] of Object.entries(refusal.headers)) ctx.set(name, value);
      ctx.body = error.body();
      return;
    }
    await next();
  };
}

/** `GET` of the server's RFC 9728 document at its well-known path, before any credential check. */
export function koaResourceMetadata(server: Authenticator) {
  const { path, document } = metadataEndpointOf(server);
  return async function portcullisResourceMetadata(
    ctx: Pick<KoaContextLike, 'req' | 'originalUrl' | 'status' | 'body' | 'set'>,
    next: () => Promise<unknown>,
  ): Promise<void> {
    const { method } = ctx.req;
    if ((method !== 'GET' && method !== 'HEAD') || pathOf(ctx.originalUrl) !== path) {
      await next();
      return;
    }
    for (const [name, value] of Object.entries(METADATA_HEADERS)) ctx.set(name, value);
    ctx.status = 200;
    ctx.body = document();
  };
}
