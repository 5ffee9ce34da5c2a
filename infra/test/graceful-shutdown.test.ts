import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnScript, waitFor } from './helpers/processes.js';

/**
 * SIGTERM under load, on the real process `npm start` runs: both servers stop accepting,
 * finish every request they accepted, end SSE streams with a last `retry:` frame, close
 * the database and exit 0. Requests are only sent to 127.0.0.1, bounded in number and time.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-drain-'));
let run: Awaited<ReturnType<typeof startAll>> | undefined;
afterAll(() => {
  // A failed run must not leave the server behind.
  if (run && run.child.exitCode === null) run.child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

const IN_FLIGHT = 20;
const LOAD_MS = 2000;
const SIGTERM_AFTER_MS = 1000;

interface Outcome {
  /** Milliseconds timestamp of the TCP connection being established, if it was. */
  connectedAt?: number;
  /** Set once the first byte of a response arrived. */
  responded?: boolean;
  status?: number;
  error?: string;
  completedAt?: number;
}

/** One request on a connection of its own (no keep-alive pool to blur "accepted"). */
function request(
  url: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = {};
    const req = http.request(url, {
      method: options.method ?? 'GET',
      agent: false,
      headers: options.headers,
    });
    req.on('socket', (socket) =>
      socket.once('connect', () => {
        outcome.connectedAt = Date.now();
      }),
    );
    req.on('response', (res) => {
      outcome.responded = true;
      res.resume();
      res.on('end', () =>
        resolve({ ...outcome, status: res.statusCode!, completedAt: Date.now() }),
      );
      res.on('error', (e) => resolve({ ...outcome, error: e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ ...outcome, error: e.code ?? e.message }),
    );
    req.end(options.body);
  });
}

const startAll = () =>
  spawnScript('infra/scripts/start-all.ts', {
    DATA_DIR: dataDir,
    AUTH_PORT: '0',
    API_PORT: '0',
    ADMIN_PORT: '0',
    WEB_PORT: '0',
  });

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
  it('finishes every accepted request, ends SSE streams with a retry frame and exits 0 on SIGTERM', async () => {
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

    const targets: (() => Promise<Outcome>)[] = [
      () => request(`${api}/healthz`),
      () => request(`${api}/readyz`),
      () => request(`${api}/orders`, { headers: { cookie: `sid=${sid}` } }),
      () =>
        request(`${api}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' }),
        }),
      () => request(`${auth}/.well-known/openid-configuration`),
      () => request(`${auth}/.well-known/jwks.json`),
      () => request(`${auth}/readyz`),
    ];
    const outcomes: Outcome[] = [];
    const started = Date.now();
    let sigtermAt = Number.POSITIVE_INFINITY;
    const worker = async (n: number) => {
      for (let i = n; Date.now() - started < LOAD_MS; i++) {
        const outcome = await request_(i);
        outcomes.push(outcome);
        // Refused after shutdown began: the server is gone, stop this worker.
        if (outcome.connectedAt === undefined && Date.now() > sigtermAt) return;
      }
    };
    const request_ = (i: number) => targets[i % targets.length]!();
    const load = Promise.all(Array.from({ length: IN_FLIGHT }, (_, n) => worker(n)));
    await new Promise((r) => setTimeout(r, SIGTERM_AFTER_MS));
    sigtermAt = Date.now();
    server.child.kill('SIGTERM');
    await load;

    const accepted = outcomes.filter(
      (o) => o.connectedAt !== undefined && o.connectedAt < sigtermAt,
    );
    // A connection the kernel completed but the server had not yet accepted when it closed
    // its listening socket is reset by the kernel, before any byte of a response: the
    // server never saw that request, and the client may retry it as refused. At most one
    // per worker (its next attempt is refused and it stops). Connections the server did
    // accept are never reset by the drain (packages/observability graceful-close.test.ts
    // pins that race deterministically); any other failure is one.
    const inBacklog = (o: Outcome) =>
      o.status === undefined && !o.responded && o.error === 'ECONNRESET';
    const failed = accepted.filter((o) => o.status === undefined && !inBacklog(o));
    expect(failed).toEqual([]);
    expect(accepted.filter(inBacklog).length).toBeLessThanOrEqual(IN_FLIGHT);
    expect(accepted.length).toBeGreaterThan(IN_FLIGHT);
    // Requests were in flight when the signal came, and were answered during the drain.
    expect(accepted.filter((o) => o.completedAt! > sigtermAt).length).toBeGreaterThan(0);
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
    // The stream ended cleanly, after a last retry frame besides the one sent at connect.
    expect(await stream.ended).toBe('end');
    expect(stream.text().match(/^retry: \d+$/gm)?.length).toBe(2);
  }, 90_000);
});
