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
  count(
    url: string,
    options?: { headers?: Record<string, string>; requests?: number; warmup?: number },
  ): Promise<number>;
  stop(): Promise<void>;
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
  let dumps = 0;
  return {
    target,
    async count(url, { headers = {}, requests = 2000, warmup = 1000 } = {}) {
      if (!/^http:\/\/127\.0\.0\.1[:/]/.test(url)) throw new Error(`refusing non-loopback ${url}`);
      await send(url, headers, warmup);
      control('-z');
      control('-i', 'on');
      await send(url, headers, requests);
      control('-i', 'off');
      control('-d');
      dumps++;
      const file = readdirSync(dir)
        .filter((name) => name.startsWith('callgrind.out'))
        .sort()
        .at(-1);
      if (!file || dumps === 0) throw new Error('callgrind wrote no dump');
      const text = readFileSync(path.join(dir, file), 'utf8');
      const total = Number(/^totals: (\d+)/m.exec(text)?.[1] ?? Number.NaN);
      rmSync(path.join(dir, file));
      return Math.round(total / requests);
    },
    async stop() {
      await target.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `total` GETs from 4 kept-alive clients; throws on any status other than 200. */
async function send(url: string, headers: Record<string, string>, total: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  let sent = 0;
  const get = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`${url}: ${res.statusCode}`)),
        );
      });
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
