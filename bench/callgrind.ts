import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTarget, type Target } from './lib.js';

/**
 * A target run under valgrind's callgrind, which counts the instructions the process
 * executes (all its threads, user space only) whatever else the machine is doing: on a
 * shared 2-core machine the one figure that compares runs made minutes apart. Counting
 * is off until `count` switches it on around the requests measured.
 */
export interface CountedTarget {
  target: Target;
  /**
   * Instructions per request of `requests` GETs of `url` (after a warm-up of `warmup`), sent
   * by 4 kept-alive clients at once; every answer must be a 200.
   */
  count(url: string, options?: CountOptions): Promise<number>;
  /**
   * As `count`, with the instructions per request spent inside the native function
   * `within` (inclusive: with everything it calls), e.g. the proof signature check.
   */
  countWithin(
    url: string,
    within: string,
    options?: CountOptions,
  ): Promise<{ total: number; within: number }>;
  stop(): Promise<void>;
}

interface CountOptions {
  headers?: Headers;
  requests?: number;
  warmup?: number;
}

export async function startCounted(
  script: string,
  env: Record<string, string> = {},
): Promise<CountedTarget> {
  const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-callgrind-'));
  const out = path.join(dir, 'callgrind.out');
  const target = await startTarget(script, env, [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    // V8 writes and rewrites the machine code it runs.
    '--smc-check=all-non-file',
    `--callgrind-out-file=${out}`,
  ]);
  const pid = String(target.child.pid);
  const control = (...args: string[]) =>
    execFileSync('callgrind_control', [...args, pid], { stdio: 'ignore' });
  /** Counts `requests` GETs after the warm-up and hands the dump's path to `read`. */
  async function measure<T>(
    url: string,
    { headers = {}, requests = 2000, warmup = 1000 }: CountOptions,
    read: (file: string, requests: number) => T,
  ): Promise<T> {
    if (!/^http:\/\/127\.0\.0\.1[:/]/.test(url)) throw new Error(`refusing non-loopback ${url}`);
    await send(url, headers, warmup);
    control('-z');
    control('-i', 'on');
    await send(url, headers, requests);
    control('-i', 'off');
    control('-d');
    // Each dump is removed once read: the one left is this one.
    const file = readdirSync(dir).find((name) => name.startsWith('callgrind.out.'));
    if (!file) throw new Error('callgrind wrote no dump');
    try {
      return read(path.join(dir, file), requests);
    } finally {
      rmSync(path.join(dir, file));
    }
  }
  const totalOf = (file: string) =>
    Number(/^totals: (\d+)/m.exec(readFileSync(file, 'utf8'))?.[1] ?? Number.NaN);
  return {
    target,
    count: (url, options = {}) =>
      measure(url, options, (file, requests) => Math.round(totalOf(file) / requests)),
    countWithin: (url, within, options = {}) =>
      measure(url, options, (file, requests) => {
        const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', file], {
          encoding: 'utf8',
          maxBuffer: 64 * 1024 * 1024,
        });
        // A line per function: "  849,031,063 (62.04%)  ???:EVP_DigestVerify [/path/node]".
        const line = annotated.split('\n').find((l) => l.includes(`:${within} [`));
        const inside = Number(/^\s*([\d,]+)/.exec(line ?? '')?.[1]?.replaceAll(',', '') ?? NaN);
        return {
          total: Math.round(totalOf(file) / requests),
          within: Math.round(inside / requests),
        };
      }),
    async stop() {
      await target.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The same headers for every request, or a function giving each request its own (DPoP proofs). */
type Headers = Record<string, string> | (() => Record<string, string>);

/** `total` GETs from 4 kept-alive clients; throws on any status other than 200. */
async function send(url: string, headers: Headers, total: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  let sent = 0;
  const get = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        url,
        { agent, headers: typeof headers === 'function' ? headers() : headers },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`${url}: ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  try {
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (sent < total) {
          sent++;
          await get();
        }
      }),
    );
  } finally {
    agent.destroy();
  }
}
