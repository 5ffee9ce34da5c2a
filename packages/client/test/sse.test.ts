import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  createPortcullisClient,
  createSseParser,
  NetworkError,
  UnauthorizedError,
} from '../src/index.js';
import type { SseEvent } from '../src/index.js';
import { delay, json, recordingSleep, startServer } from './server.js';
import type { TestServer } from './server.js';

let server: TestServer;
afterEach(() => server?.close());

function parseAll(chunks: string[]): { events: SseEvent[]; retries: number[] } {
  const events: SseEvent[] = [];
  const retries: number[] = [];
  const parser = createSseParser(
    (e) => events.push(e),
    (ms) => retries.push(ms),
  );
  for (const chunk of chunks) parser.feed(chunk);
  return { events, retries };
}

describe('SSE parser', () => {
  const text =
    ': heartbeat\r\n\r\n' +
    'retry: 2500\n' +
    'id: 7\nevent: order.created\ndata: {"id":"o1"}\n\n' +
    'data: first line\r\ndata:second line\r\n\r\n' +
    'data\rdata: x\r\r' +
    'event: ignored-without-data\n\n' +
    'id: 8\ndata: tail-without-blank-line';
  const expected: SseEvent[] = [
    { id: '7', event: 'order.created', data: '{"id":"o1"}' },
    { id: '7', event: 'message', data: 'first line\nsecond line' },
    { id: '7', event: 'message', data: '\nx' },
  ];

  it('parses fields, comments, CRLF/LF/CR line ends and multi-line data', () => {
    expect(parseAll([text])).toEqual({ events: expected, retries: [2500] });
  });

  it('gives the same events however the text is split', () => {
    for (let i = 1; i < text.length; i++) {
      expect(parseAll([text.slice(0, i), text.slice(i)]).events).toEqual(expected);
    }
    expect(parseAll([...text]).events).toEqual(expected);
  });
});

/** Starts an SSE response. */
function open(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
  res.flushHeaders();
}

describe('stream()', () => {
  it('parses frames as they arrive, reconnects after a drop with Last-Event-ID and honours retry:', async () => {
    let resolveSeen!: () => void;
    const firstSeen = new Promise<void>((resolve) => (resolveSeen = resolve));
    let deliveredWhileOpen = false;
    server = await startServer(async (req, res, { n }) => {
      open(res);
      if (n === 1) {
        res.write(': heartbeat\n\nretry: 50\n');
        res.write('id: 1\nevent: order.created\nda');
        await delay(20);
        res.write('ta: {"a":1}\r\n\r');
        await delay(20);
        res.write('\n');
        // The client must hand out event 1 while this response is still open.
        await Promise.race([firstSeen.then(() => (deliveredWhileOpen = true)), delay(2000)]);
        res.write('id: 2\ndata: line1\ndata: line2\n\nid: 3\ndata: never-completed');
        await delay(20);
        req.socket.destroy();
      } else {
        res.write(`id: 3\ndata: resumed after ${req.headers['last-event-id']}\n\n`);
      }
    });
    const { sleeps, sleep } = recordingSleep();
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 't',
      retry: { sleep },
    });
    const controller = new AbortController();

    const events: SseEvent[] = [];
    for await (const event of client.stream({ signal: controller.signal })) {
      events.push(event);
      if (event.id === '1') resolveSeen();
      if (event.id === '3') controller.abort();
    }

    expect(deliveredWhileOpen).toBe(true);
    expect(events).toEqual([
      { id: '1', event: 'order.created', data: '{"a":1}' },
      { id: '2', event: 'message', data: 'line1\nline2' },
      { id: '3', event: 'message', data: 'resumed after 2' },
    ]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers['last-event-id']).toBeUndefined();
    expect(server.requests[1]?.headers).toMatchObject({
      'last-event-id': '2',
      accept: 'text/event-stream',
      authorization: 'Bearer t',
    });
    expect(sleeps).toEqual([50]);
  });

  it('sends only headers a cross-origin page may send to the API (its CORS allowance), and skips the browser cache', async () => {
    server = await startServer((_req, res) => {
      open(res);
      res.end('data: hello\n\n');
    });
    const sent: RequestInit[] = [];
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 't',
      fetch: (input, init) => {
        sent.push(init ?? {});
        return fetch(input, init);
      },
    });
    const controller = new AbortController();
    for await (const _ of client.stream({ signal: controller.signal, lastEventId: '1' })) {
      controller.abort();
    }
    // The API's CORS allowHeaders (apps/api/src/app.ts) for GET /stream.
    const allowed = ['accept', 'authorization', 'dpop', 'last-event-id'];
    expect([...new Headers(sent[0]!.headers).keys()].filter((h) => !allowed.includes(h))).toEqual(
      [],
    );
    expect(sent[0]!.cache).toBe('no-store');
  });

  it('says when a connection opens and why a reconnect follows', async () => {
    server = await startServer((_req, res, { n }) => {
      if (n === 2) return json(res, 503, { error: 'unavailable' });
      open(res);
      res.end(n === 1 ? ': connected\n\n' : 'data: hello\n\n');
    });
    const seen: string[] = [];
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep: recordingSleep().sleep },
    });
    const controller = new AbortController();
    const stream = client.stream({
      signal: controller.signal,
      onOpen: () => seen.push('open'),
      onError: (error) => seen.push(`error ${(error as Error).message}`),
    });
    for await (const event of stream) {
      seen.push(`event ${event.data}`);
      controller.abort();
    }
    expect(seen).toEqual([
      'open',
      'error stream ended',
      'error 503 unavailable',
      'open',
      'event hello',
    ]);
  });

  it('sends the caller’s lastEventId on the first connect and stops on 204', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const client = createPortcullisClient({ baseUrl: server.url });
    const events: SseEvent[] = [];
    for await (const event of client.stream({ lastEventId: '41' })) events.push(event);
    expect(events).toEqual([]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers['last-event-id']).toBe('41');
  });

  it('backs off exponentially while reconnects fail, then gives up', async () => {
    server = await startServer((_req, res) => json(res, 503, { error: 'unavailable' }));
    const { sleeps, sleep } = recordingSleep();
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep, random: () => 1 },
    });

    const iterate = async (): Promise<void> => {
      for await (const _ of client.stream({ reconnectDelayMs: 100, maxReconnectAttempts: 3 })) {
        // no events expected
      }
    };

    await expect(iterate()).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('refreshes the token once on 401', async () => {
    server = await startServer((req, res) => {
      if (req.headers.authorization !== 'Bearer fresh') {
        json(res, 401, { error: 'invalid_token' });
        return;
      }
      open(res);
      res.end('data: hello\n\n');
    });
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'old',
      refresh: async () => 'fresh',
    });
    const controller = new AbortController();
    const events: string[] = [];
    for await (const event of client.stream({ signal: controller.signal })) {
      events.push(event.data);
      controller.abort();
    }
    expect(events).toEqual(['hello']);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer old',
      'Bearer fresh',
    ]);

    const failing = createPortcullisClient({ baseUrl: server.url, accessToken: 'old' });
    const iterate = async (): Promise<void> => {
      for await (const _ of failing.stream()) {
        // unreachable
      }
    };
    await expect(iterate()).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('closes the connection when the consumer stops early', async () => {
    let closed = false;
    server = await startServer((_req, res) => {
      open(res);
      res.write('data: one\n\n');
      res.on('close', () => (closed = true));
    });
    const client = createPortcullisClient({ baseUrl: server.url });
    for await (const _ of client.stream()) break;
    await delay(100);
    expect(closed).toBe(true);
  });

  it('reports a connection that cannot be made as NetworkError once attempts run out', async () => {
    server = await startServer((req) => void req.socket.destroy());
    const client = createPortcullisClient({
      baseUrl: server.url,
      retry: { sleep: recordingSleep().sleep },
    });
    const iterate = async (): Promise<void> => {
      for await (const _ of client.stream({ maxReconnectAttempts: 1 })) {
        // none
      }
    };
    await expect(iterate()).rejects.toBeInstanceOf(NetworkError);
    expect(server.requests).toHaveLength(2);
  });
});
