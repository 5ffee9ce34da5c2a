import type { ParameterizedContext } from 'koa';
import { type Principal, type Revocation } from '@portcullis/claims';
import type { ApiConfig } from '../config.js';
import type { EventRecord } from '../data/events-repo.js';
import { RateLimitedError, ServiceUnavailableError } from '../errors.js';
import { principalOf, type ApiState } from '../middleware/authenticate.js';
import { defineRawRoute } from '../openapi/raw-route.js';
import type { ApiRouter } from '../openapi/define-route.js';
import { z } from '../openapi/zod.js';
import type { RouteDeps } from './deps.js';
import { canSee, eventJson, eventVisibility } from './events.js';
import { Perm } from '../permissions.js';

const REPLAY_PAGE = 500;
/** A client this far behind is dropped; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 1 << 20;
const RETRY_MS = 3000;
const SHUTDOWN_RETRY_MS = () => 500 + Math.floor(Math.random() * 2000);
const LAST_EVENT_ID = /^\d{1,18}$/;
const ALREADY_SENT_MS = 60_000;
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Accel-Buffering': 'no',
};

const frame = (event: EventRecord) =>
  `id: ${event.id}\ndata: ${JSON.stringify(eventJson(event))}\n\n`;

const revocationKey = (r: Revocation) => `${r.kind}:${r.value}`;

/** The revocations that may end a principal's stream; re-authentication decides which applies. */
function revocationKeysOf(principal: Principal): string[] {
  const keys = [revocationKey({ kind: 'subject', value: principal.subject })];
  if (principal.grantId) keys.push(revocationKey({ kind: 'grant', value: principal.grantId }));
  if (principal.tokenId) keys.push(revocationKey({ kind: 'jti', value: principal.tokenId }));
  return keys;
}

/** GET /stream: server-sent events of the outbox (docs/architecture.md, "The event stream"). */
export function streamRoutes(api: ApiRouter, deps: RouteDeps, config: ApiConfig): void {
  const openBySubject = new Map<string, number>();
  const { heartbeatMs, perPrincipal } = config.streams;
  const rechecksByRevocation = new Map<string, Set<() => void>>();
  // Subscribed on the first stream, not at mount: openapi/offline.ts mounts on inert deps.
  let listening = false;
  function listenForRevocations(): void {
    if (listening) return;
    listening = true;
    deps.onRevocation?.((revocation) => {
      for (const recheck of rechecksByRevocation.get(revocationKey(revocation)) ?? []) recheck();
    });
  }

  function watchRevocations(keys: readonly string[], recheck: () => void): () => void {
    listenForRevocations();
    for (const key of keys) {
      const rechecks = rechecksByRevocation.get(key) ?? new Set();
      rechecksByRevocation.set(key, rechecks.add(recheck));
    }
    return () => {
      for (const key of keys) {
        const rechecks = rechecksByRevocation.get(key);
        rechecks?.delete(recheck);
        if (rechecks?.size === 0) rechecksByRevocation.delete(key);
      }
    };
  }

  async function stillAuthenticated(ctx: ParameterizedContext<ApiState>): Promise<boolean> {
    try {
      // A heartbeat's check is no request of the caller's: it spends none of their rate limit.
      ctx.state.recheck = true;
      await api.authenticate(ctx as never, async () => undefined);
      return true;
    } catch {
      return false;
    }
  }

  defineRawRoute(
    api,
    {
      method: 'get',
      path: '/stream',
      operationId: 'streamEvents',
      summary: 'Live events as server-sent events; resume with Last-Event-ID',
      description:
        'Frames are `id: <event id>` + `data: <Event JSON>`; `: ping` comments every 15 s. ' +
        'Ends when the credential expires or is revoked. At most STREAMS_PER_PRINCIPAL streams per caller.',
      tags: ['events'],
      permission: Perm.EventsRead,
      request: {
        headers: z.object({
          'last-event-id': z
            .string()
            .optional()
            .openapi({ param: { description: 'Replay events after this id first' } }),
        }),
      },
      responses: {
        200: {
          description: 'An event stream',
          content: { 'text/event-stream': { schema: z.string() } },
        },
        401: { description: 'Missing or invalid credential' },
        403: { description: 'Lacking events:read: exactly `{"error":"forbidden"}`' },
        429: { description: 'Too many open streams (`Retry-After`)' },
      },
    },
    async function streamEvents(ctx) {
      const principal = principalOf(ctx);
      // Shutting down: the client's EventSource retries, and reaches another instance.
      if (deps.eventBus.closed)
        throw new ServiceUnavailableError('this instance is shutting down', 1);
      // HEAD: Node holds the headers until the response ends, which a stream never does.
      if (ctx.method === 'HEAD') {
        ctx.status = 200;
        ctx.set(SSE_HEADERS);
        return;
      }
      const subject = principal.subject;
      const open = openBySubject.get(subject) ?? 0;
      if (open >= perPrincipal) throw new RateLimitedError(5);
      openBySubject.set(subject, open + 1);

      const visibility = eventVisibility(principal);
      const lastEventId = ctx.get('Last-Event-ID');
      let ended = false;
      let unsubscribe: (() => void) | undefined;
      let replayed: Set<string> | undefined = new Set();
      // The bus cursor can be behind the replay: replayed events are sent once only.
      let alreadySent: Set<string> | undefined;
      const pending: EventRecord[] = [];
      const timers: NodeJS.Timeout[] = [];
      const recheck = () => void stillAuthenticated(ctx).then((ok) => ok || end());
      const unwatch = watchRevocations(revocationKeysOf(principal), recheck);

      function end(): void {
        if (ended) return;
        ended = true;
        for (const t of timers) clearTimeout(t);
        unwatch();
        unsubscribe?.();
        const left = (openBySubject.get(subject) ?? 1) - 1;
        if (left > 0) openBySubject.set(subject, left);
        else openBySubject.delete(subject);
        ctx.res.end();
      }

      function write(text: string): void {
        if (ended || !ctx.res.writable) return;
        ctx.res.write(text);
        if (ctx.res.writableLength > MAX_BUFFERED_BYTES) end();
      }

      function deliver(event: EventRecord): void {
        if (!canSee(visibility, event)) return;
        if (alreadySent?.delete(event.id)) return;
        if (replayed) {
          pending.push(event);
          return;
        }
        write(frame(event));
      }

      function endForShutdown(): void {
        write(`retry: ${SHUTDOWN_RETRY_MS()}\n\n`);
        end();
      }

      async function start(): Promise<void> {
        const stop = await deps.eventBus.subscribe(deliver, endForShutdown);
        if (ended) return stop();
        unsubscribe = stop;
        if (LAST_EVENT_ID.test(lastEventId)) {
          let after = lastEventId;
          for (;;) {
            const events = await deps.repos.events.listAfter(visibility, after, REPLAY_PAGE);
            for (const event of events) {
              replayed!.add(event.id);
              write(frame(event));
            }
            if (events.length < REPLAY_PAGE || ended) break;
            after = events.at(-1)!.id;
          }
        }
        const done = replayed!;
        replayed = undefined;
        for (const event of pending.splice(0)) if (!done.delete(event.id)) write(frame(event));
        if (done.size === 0) return;
        alreadySent = done;
        timers.push(setTimeout(() => (alreadySent = undefined), ALREADY_SENT_MS));
      }

      const heartbeat = setInterval(() => {
        write(': ping\n\n');
        recheck();
      }, heartbeatMs);
      timers.push(heartbeat as unknown as NodeJS.Timeout);
      if (principal.expiresAt !== undefined) {
        const ms = principal.expiresAt * 1000 - deps.clock().getTime();
        timers.push(setTimeout(end, Math.max(0, Math.min(ms, 2 ** 31 - 1))));
      }
      ctx.res.once('close', end);

      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setNoDelay(true);
      ctx.status = 200;
      ctx.set(SSE_HEADERS);
      // Written here, not by Koa: a client leaving is the normal end of a stream.
      ctx.respond = false;
      ctx.res.writeHead(200);
      write(`retry: ${RETRY_MS}\n: connected\n\n`);
      start().catch((error: unknown) => {
        deps.logger.error({ err: error }, 'event stream failed');
        end();
      });
    },
  );
}
