import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { buildEntry } from '../../scripts/build.mjs';

export const root = path.resolve(import.meta.dirname, '../../..');

export interface Spawned {
  child: ChildProcess;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Everything the process printed so far, stdout and stderr together. */
  output(): string;
}

let builds = 0;

/**
 * Runs one of the repository's TypeScript entry points as a real process, the way
 * `npm start` and the containers do: compiled ahead of time by `pnpm build`'s bundler,
 * then run as plain JavaScript, with nothing of this process's environment but PATH and
 * HOME.
 */
export async function spawnScript(script: string, env: Record<string, string>): Promise<Spawned> {
  const name = `${path.basename(script, '.ts')}-${process.pid}-${++builds}.js`;
  const compiled = path.join(root, '.test-output/dist', name);
  await buildEntry(script, compiled);
  const child = spawn(process.execPath, [compiled], {
    cwd: root,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** Polls `probe` every 100 ms until it returns a value; throws after `ms`. */
export async function waitFor<T>(probe: () => T | undefined, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
