import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildEntry, HEAP_OPTIONS } from '../infra/scripts/build.mjs';
import type { DpopKey } from './dpop.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface HttpFigure {
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /**
   * CPU time (user + system) the server process spent per request over the measured runs,
   * in µs, when the load names its `pid`: unlike a rate, it barely moves with what else
   * the machine is doing.
   */
  cpuUsPerRequest?: number;
}

export interface Target {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  info: Record<string, any>;
  child: ChildProcess;
  /** Peak resident set size of the target process so far, in MB (from /proc). */
  peakRssMb(): number;
  stop(): Promise<void>;
}

/**
 * Starts a benchmark target in its own process, so the load generator and the server do
 * not share an event loop. The target is compiled ahead of time first (`pnpm build`'s
 * bundler) and run with the image's heap settings, as production runs it. It prints one
 * JSON line with its URL (and anything else the bench needs) when it is ready.
 */
export async function startTarget(
  script: string,
  env: Record<string, string> = {},
  /** A command the target runs under, e.g. valgrind and its options (bench/callgrind.ts). */
  wrap: string[] = [],
): Promise<Target> {
  const compiled = path.join(root, 'bench/dist', script.replace(/\.ts$/, '.js'));
  await buildEntry(path.join('bench/targets', script), compiled);
  const [command, ...args] = [...wrap, process.execPath, compiled];
  const child = spawn(command!, args, {
    cwd: root,
    // The heap settings the container image runs with (infra/scripts/build.mjs).
    env: { ...process.env, NODE_OPTIONS: HEAP_OPTIONS, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      child.removeAllListeners('exit');
      // Ready: anything printed later is drained, not kept.
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      resolve({
        info: JSON.parse(line) as Record<string, string>,
        child,
        peakRssMb: () => readPeakRssMb(child.pid!),
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

function readPeakRssMb(pid: number): number {
  try {
    // VmHWM is the peak resident set size the kernel recorded for the process.
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return Number.NaN;
  }
}

async function once(
  load: HttpLoad,
  options: { seconds: number; connections: number; overallRate?: number | undefined },
): Promise<HttpFigure & { requests: number; cpuMs: number }> {
  load.perRequest?.prepare(options.seconds);
  const perRequest = load.perRequest;
  const cpuBefore = load.pid === undefined ? 0 : processCpuMs(load.pid);
  const result = await autocannon({
    ...(perRequest
      ? {
          requests: [
            {
              setupRequest: (req: autocannon.Request) => ({
                ...req,
                headers: { ...req.headers, ...perRequest.headers() },
              }),
            },
          ],
        }
      : {}),
    url: load.url,
    headers: load.headers ?? {},
    method: load.method ?? 'GET',
    ...(load.body === undefined ? {} : { body: load.body }),
    duration: options.seconds,
    connections: options.connections,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    pipelining: 1,
  });
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    requests: result.requests.total,
    cpuMs: load.pid === undefined ? 0 : processCpuMs(load.pid) - cpuBefore,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export interface HttpLoad {
  url: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** The server's process id, for `cpuUsPerRequest`. */
  pid?: number | undefined;
  /** Headers that differ per request (DPoP proofs): prepared before each run, taken one per request. */
  perRequest?: { prepare(seconds: number): void; headers(): Record<string, string> };
}

/** A warm-up run, then the median of `runs` bounded runs against 127.0.0.1 only. */
export async function measureHttp(
  url: string,
  options: Omit<HttpLoad, 'url'> & { runs?: number; seconds?: number; connections?: number } = {},
): Promise<HttpFigure> {
  const { runs, seconds, connections, ...load } = options;
  const [figure] = await measureHttpInterleaved([{ url, ...load }], { runs, seconds, connections });
  return figure!;
}

/**
 * Several loads measured in alternation (a, b, a, b, …), each reduced to the median of
 * `runs` bounded runs after a warm-up of each. A ratio between them then compares runs
 * made under the same machine load: this 2-core machine's speed drifts by a third
 * within minutes, which sequential blocks of runs turn into a skewed ratio.
 */
export async function measureHttpInterleaved(
  loads: HttpLoad[],
  options: {
    runs?: number | undefined;
    seconds?: number | undefined;
    connections?: number | undefined;
    /** Requests per second for every load (autocannon's overallRate); default: as fast as it goes. */
    overallRate?: number | undefined;
  } = {},
): Promise<HttpFigure[]> {
  for (const { url } of loads) {
    if (!/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(url))
      throw new Error(`refusing non-loopback ${url}`);
  }
  const seconds = options.seconds ?? 5;
  const connections = options.connections ?? 20;
  const { overallRate } = options;
  for (const load of loads) await once(load, { seconds: 2, connections, overallRate });
  const figures: Array<Awaited<ReturnType<typeof once>>[]> = loads.map(() => []);
  for (let i = 0; i < (options.runs ?? 3); i++) {
    for (const [j, load] of loads.entries())
      figures[j]!.push(await once(load, { seconds, connections, overallRate }));
  }
  const sum = (runs: Array<{ requests: number; cpuMs: number }>, key: 'requests' | 'cpuMs') =>
    runs.reduce((n, f) => n + f[key], 0);
  return figures.map((runs, i) => ({
    requestsPerSecond: Math.round(median(runs.map((f) => f.requestsPerSecond))),
    p99Ms: median(runs.map((f) => f.p99Ms)),
    non2xx: runs.reduce((n, f) => n + f.non2xx, 0),
    errors: runs.reduce((n, f) => n + f.errors, 0),
    ...(loads[i]!.pid === undefined
      ? {}
      : {
          cpuUsPerRequest: Math.round(
            (sum(runs, 'cpuMs') * 1000) / Math.max(sum(runs, 'requests'), 1),
          ),
        }),
  }));
}

/**
 * Operations per second of an async function run back to back by `concurrency` loops for
 * `ms`; median of `runs` runs after a warm-up.
 */
export async function measureOps(
  fn: (loop: number) => Promise<unknown>,
  ms = 2000,
  concurrency = 1,
  runs = 3,
): Promise<number> {
  for (let i = 0; i < 10; i++) await fn(i % concurrency);
  const rates: number[] = [];
  for (let run = 0; run < runs; run++) {
    let count = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, loop) => {
        while (performance.now() - start < ms) {
          await fn(loop);
          count++;
        }
      }),
    );
    rates.push((count * 1000) / (performance.now() - start));
  }
  return Math.round(median(rates));
}

/**
 * Rates of several functions measured in alternation (a, b, a, b, …), so a change in
 * machine load during the run hits each of them alike. `rates[i]` is the median rate of
 * `fns[i]`; `versusFirst[i]` is the median over rounds of fns[0]'s rate divided by
 * fns[i]'s in the same round (how much slower fns[i] is, robust to drift between rounds).
 */
export async function measureOpsInterleaved(
  fns: Array<() => Promise<unknown>>,
  { rounds = 5, ms = 1000 } = {},
): Promise<{ rates: number[]; versusFirst: number[] }> {
  for (const fn of fns) for (let i = 0; i < 50; i++) await fn();
  const rates: number[][] = fns.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, fn] of fns.entries()) {
      let count = 0;
      const start = performance.now();
      while (performance.now() - start < ms) {
        await fn();
        count++;
      }
      rates[i]!.push((count * 1000) / (performance.now() - start));
    }
  }
  return {
    rates: rates.map((r) => Math.round(median(r))),
    versusFirst: rates.map((r) => median(r.map((rate, round) => rates[0]![round]! / rate))),
  };
}

/** CPU time (user + system, all threads) a process has used so far, in milliseconds. */
export function processCpuMs(pid: number): number {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat, after the parenthesised command name.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
  } catch {
    return 0;
  }
}

/**
 * CPU time used so far by every PostgreSQL process of this machine (backends and
 * background workers), in milliseconds: the database's share of a load when the server
 * runs on 127.0.0.1 next to the benchmark.
 */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    total += processCpuMs(Number(entry));
  }
  return total;
}

/** The PostgreSQL server the benchmark creates its own database on. */
export function postgresUrl(): string {
  return process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
}

export async function clientCredentials(
  authUrl: string,
  clientId: string,
  clientSecret: string,
  scope = 'api',
  dpop?: DpopKey,
): Promise<string> {
  const post = (nonce?: string) =>
    fetch(`${authUrl}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        // A proof binds the token to the key (token_type DPoP, cnf.jkt).
        ...(dpop
          ? { dpop: dpop.proof('POST', `${authUrl}/token`, nonce === undefined ? {} : { nonce }) }
          : {}),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope }),
    });
  let response = await post();
  const nonce = response.headers.get('dpop-nonce');
  if (dpop && response.status === 400 && nonce) response = await post(nonce);
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`client_credentials failed: ${JSON.stringify(body)}`);
  return body.access_token;
}
