import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { spawnScript, waitFor } from './helpers/processes.js';

/**
 * SIGTERM under load, on the real process `npm start` runs: /readyz fails at once, every
 * request that reaches a server is answered (with `Connection: close`), SSE streams end
 * with a last `retry:` frame, the listeners close once clients stop arriving (later ones
 * are refused), the database is closed and the process exits 0. Requests are only sent
 * to 127.0.0.1, bounded in number and time.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-drain-'));
let run: Awaited<ReturnType<typeof startAll>> | undefined;
/** With DATABASE_URL (and REDIS_URL) set, the process runs on a PostgreSQL database of its own. */
let database: TestDatabase | undefined;
afterAll(async () => {
  // A failed run must not leave the server behind.
  if (run && run.child.exitCode === null) run.child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  await database?.close();
});

const IN_FLIGHT = 20;
/** Of the workers, these send their requests on kept-alive connections. */
const KEPT_ALIVE = 6;
const LOAD_MS = 2000;
const SIGTERM_AFTER_MS = 1000;

interface Outcome {
  url: string;
  /** Milliseconds timestamp of the TCP connection being established, if it was. */
  connectedAt?: number;
  /** Set once the first byte of a response arrived. */
  responded?: boolean;
  status?: number;
  /** The response's Connection header. */
  connection?: string;
  error?: string;
  /** The request went out on a kept-alive connection that an earlier request used. */
  reusedSocket?: boolean;
  sentAt?: number;
  completedAt?: number;
}

interface RequestOptions {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  /** A keep-alive pool; by default each request has a connection of its own. */
  agent?: http.Agent;
}

function request(url: string, options: RequestOptions = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = { url, sentAt: Date.now() };
    const req = http.request(url, {
      method: options.method ?? 'GET',
      agent: options.agent ?? false,
      headers: options.headers,
    });
    req.on('socket', (socket) => {
      outcome.reusedSocket = req.reusedSocket;
      if (req.reusedSocket) outcome.connectedAt = outcome.sentAt;
      else
        socket.once('connect', () => {
          outcome.connectedAt = Date.now();
        });
    });
    req.on('response', (res) => {
      outcome.responded = true;
      res.resume();
      res.on('end', () =>
        resolve({
          ...outcome,
          status: res.statusCode!,
          connection: res.headers.connection ?? '',
          completedAt: Date.now(),
        }),
      );
      res.on('error', (e) => resolve({ ...outcome, error: e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ ...outcome, error: e.code ?? e.message }),
    );
    req.end(options.body);
  });
}

async function startAll() {
  if (process.env['DATABASE_URL']) database = await createTestDatabase();
  const redisUrl = process.env['REDIS_URL'];
  return spawnScript('infra/scripts/start-all.ts', {
    DATA_DIR: dataDir,
    AUTH_PORT: '0',
    API_PORT: '0',
    ADMIN_PORT: '0',
    WEB_PORT: '0',
    ...(database?.url ? { DATABASE_URL: database.url } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `drain-${randomUUID()}:` } : {}),
  });
}

/** An SSE stream of the API, recording what arrives and how it ends. */
function openStream(url: string, sid: string) {
  let text = '';
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  const ended = new Promise<'end' | 'error'>((resolve) => {
    http
      .get(
        url,
        { agent: false, headers: { cookie: `sid=${sid}`, accept: 'text/event-stream' } },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
            if (text.includes(': connected')) connected();
          });
          res.on('end', () => resolve('end'));
          res.on('error', () => resolve('error'));
        },
      )
      .on('error', () => resolve('error'));
  });
  return { ready, ended, text: () => text };
}

describe('graceful shutdown (infra/scripts/start-all.ts)', () => {
  it('answers every request that reaches it, refuses the rest before they are sent, ends SSE streams with a retry frame and exits 0 on SIGTERM', async () => {
    const server = await startAll();
    run = server;
    const line = await waitFor(
      () =>
        server
          .output()
          .split('\n')
          .find((l) => l.includes('Portcullis is up')),
      30_000,
    );
    const { auth, api } = JSON.parse(line) as { auth: string; api: string };

    // A demo user's session and an open event stream.
    const login = await fetch(`${api}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'viewer@example.com', password: 'portcullis-viewer' }),
    });
    expect(login.status).toBe(200);
    const sid = /sid=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
    const stream = openStream(`${api}/stream`, sid);
    await stream.ready;

    const targets: ((agent?: http.Agent) => Promise<Outcome>)[] = [
      (agent) => request(`${api}/healthz`, { agent }),
      (agent) => request(`${api}/readyz`, { agent }),
      (agent) => request(`${api}/orders`, { agent, headers: { cookie: `sid=${sid}` } }),
      (agent) =>
        request(`${api}/login`, {
          agent,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' }),
        }),
      (agent) => request(`${auth}/.well-known/openid-configuration`, { agent }),
      (agent) => request(`${auth}/.well-known/jwks.json`, { agent }),
      (agent) => request(`${auth}/readyz`, { agent }),
    ];
    const outcomes: Outcome[] = [];
    const started = Date.now();
    let sigtermAt = Number.POSITIVE_INFINITY;
    const agents: http.Agent[] = [];
    // Until LOAD_MS, and a second past the moment the process logs that it is stopping (a
    // loaded machine can take that long to get to the signal), as a balancer that takes a
    // second to act on the failing /readyz (longer on a loaded machine: below); 15 s at most.
    let stoppingSeenAt: number | undefined;
    let scanned = 0;
    const loading = () => {
      if (stoppingSeenAt === undefined) {
        const output = server.output();
        if (output.includes('"msg":"shutting down"', Math.max(0, scanned - 40)))
          stoppingSeenAt = Date.now();
        scanned = output.length;
      }
      const now = Date.now();
      if (now - started >= 15_000) return false;
      if (now - started < LOAD_MS) return true;
      if (stoppingSeenAt === undefined) return now > sigtermAt;
      // A second, or on a loaded machine (fewer requests a second) until more than
      // IN_FLIGHT were answered after the log line, within the 3 s the server keeps serving.
      const after = now - stoppingSeenAt;
      return after < 1000 || (after < 3000 && answeredSince(stoppingSeenAt) <= IN_FLIGHT);
    };
    const answeredSince = (at: number) =>
      outcomes.filter((o) => o.sentAt! > at && o.status !== undefined).length;
    const worker = async (n: number) => {
      const agent = n < KEPT_ALIVE ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : undefined;
      if (agent) agents.push(agent);
      for (let i = n; loading(); i++) {
        const outcome = await targets[i % targets.length]!(agent);
        outcomes.push(outcome);
        // Refused after shutdown began: the server is gone, stop this worker.
        if (outcome.status === undefined && Date.now() > sigtermAt) return;
      }
    };
    const load = Promise.all(Array.from({ length: IN_FLIGHT }, (_, n) => worker(n)));
    await new Promise((r) => setTimeout(r, SIGTERM_AFTER_MS));
    sigtermAt = Date.now();
    server.child.kill('SIGTERM');
    await load;
    for (const agent of agents) agent.destroy();
    expect(await server.exited).toBe(0);

    // Each request was answered, or refused before it was sent: the connection could not
    // be made (ECONNREFUSED, the listener was closed), so no byte of it left the client.
    // A reset of a connection that carried a request, whether the server never accepted
    // it (the kernel's accept backlog when a listener closes) or dropped it, fails the
    // test: its client cannot tell whether the request was carried out. A reset of a
    // reused keep-alive connection is the one exception: the drain closed it while it was
    // idle (no request under way, so none was read), and HTTP lets the client retry on a
    // new connection (RFC 9112 §9.3.1). On a loaded machine a client can still be sending
    // on such a connection at that instant; Node marks the request `reusedSocket`.
    const refusedBeforeSending = (o: Outcome) =>
      (o.error === 'ECONNREFUSED' && o.connectedAt === undefined) ||
      (o.error === 'ECONNRESET' && o.reusedSocket === true);
    const failed = outcomes.filter((o) => o.status === undefined && !refusedBeforeSending(o));
    expect(failed).toEqual([]);
    // From the moment the process handled the signal (its log line), not the moment it was
    // sent: a loaded process takes a while to get to it.
    const stoppingAt = (
      JSON.parse(
        server
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"shutting down"'))!,
      ) as { time: number }
    ).time;
    const afterSignal = outcomes.filter((o) => o.sentAt! > stoppingAt && o.status !== undefined);
    // Requests kept coming after the signal, and were answered: readiness failing, each
    // response ending its connection.
    expect(afterSignal.length).toBeGreaterThan(IN_FLIGHT);
    expect(afterSignal.filter((o) => o.connection !== 'close')).toEqual([]);
    const probes = afterSignal.filter((o) => o.url.endsWith('/readyz'));
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.filter((o) => o.status !== 503)).toEqual([]);
    expect(outcomes.filter((o) => o.reusedSocket && o.status !== undefined).length).toBeGreaterThan(
      KEPT_ALIVE,
    );
    // Once the listeners closed, a client is refused before it sends anything.
    for (const url of [api, auth])
      expect(await request(`${url}/healthz`)).toMatchObject({ error: 'ECONNREFUSED' });
    expect(server.output()).toContain('"msg":"stopped"');
    // The stream ended cleanly, after a last retry frame besides the one sent at connect.
    expect(await stream.ended).toBe('end');
    expect(stream.text().match(/^retry: \d+$/gm)?.length).toBe(2);
  }, 90_000);
});
