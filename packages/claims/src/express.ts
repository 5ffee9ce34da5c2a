// `expressAuth(server[, requirement])`: refusals answered here, others to `next` (README "A complete service").
import { AuthenticationError } from './challenge.js';
import { externalUrlOf, METADATA_HEADERS, metadataEndpointOf, pathOf, refusalOf } from './http.js';
import {
  authRequestOf,
  type Authentication,
  type Authenticator,
  type RouteRequirement,
} from './resource-server.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth?: Authentication;
    }
  }
}

/** The parts of an Express request the adapter uses. */
export interface ExpressRequestLike {
  method?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  headersDistinct?: Record<string, string[] | undefined>;
  protocol: string;
  originalUrl?: string;
  url?: string | undefined;
  get(name: string): string | undefined;
  auth?: Authentication;
}

/** The parts of a response the adapter uses (Node's ServerResponse has them all). */
export interface ExpressResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

export interface ExpressAuthOptions extends RouteRequirement {
  /** The externally visible origin (behind a proxy), for DPoP `htu` checks. */
  publicUrl?: string | undefined;
}

export function expressAuth(server: Authenticator, options: ExpressAuthOptions = {}) {
  const { publicUrl, ...requirement } = options;
  server.declareRoute?.(requirement);
  return function portcullisAuth(
    req: ExpressRequestLike,
    res: ExpressResponseLike,
    next: (error?: unknown) => void,
  ): void {
    const check = async (): Promise<void> => {
      let auth = req.auth;
      if (!auth) {
        const origin = `${req.protocol}://${req.get('host') ?? ''}`;
        const url = externalUrlOf(origin, req.originalUrl ?? req.url ?? '/', publicUrl);
        auth = await server.authenticate(authRequestOf(req, url), requirement);
        req.auth = auth;
        for (const [name, value] of Object.entries(auth.headers)) res.setHeader(name, value);
      }
      server.authorize(auth, requirement);
    };
    check().then(
      () => next(),
      (error: unknown) => {
        if (!(error instanceof AuthenticationError)) return next(error);
        const refusal = refusalOf(error);
        res.statusCode = refusal.status;
        for (const [name, value] of Object.entries(refusal.headers)) res.setHeader(name, value);
        res.end(refusal.body);
      },
    );
  };
}

/** `GET` of the server's RFC 9728 document at its well-known path, before any credential check. */
export function expressResourceMetadata(server: Authenticator) {
  const { path, document } = metadataEndpointOf(server);
  return function portcullisResourceMetadata(
    req: Pick<ExpressRequestLike, 'method' | 'originalUrl' | 'url'>,
    res: ExpressResponseLike,
    next: (error?: unknown) => void,
  ): void {
    const { method } = req;
    if (
      (method !== 'GET' && method !== 'HEAD') ||
      pathOf(req.originalUrl ?? req.url ?? '/') !== path
    ) {
      next();
      return;
    }
    res.statusCode = 200;
    for (const [name, value] of Object.entries(METADATA_HEADERS)) res.setHeader(name, value);
    res.end(JSON.stringify(document()));
  };
}
