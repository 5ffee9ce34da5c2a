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
const children = new Set<ChildProcess>();
// A test process that ends, even by a timeout, leaves no server behind (exit-with-parent.mjs
// covers the case where it is killed).
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
const exitWithParent = path.join(import.meta.dirname, 'exit-with-parent.mjs');

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
  const child = spawn(process.execPath, ['--import', exitWithParent, compiled], {
    cwd: root,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

const compiledOnce = new Map<string, Promise<string>>();

/**
 * `script` compiled as spawnScript compiles it, once per test file: for a command a test
 * runs many times (the admin CLI), where tsx would transpile the sources in every run.
 */
export function compiledScript(script: string): Promise<string> {
  let compiled = compiledOnce.get(script);
  if (!compiled) {
    const out = path.join(
      root,
      '.test-output/dist',
      `${path.basename(script, '.ts')}-${process.pid}-${++builds}.js`,
    );
    compiled = buildEntry(script, out).then(() => out);
    compiledOnce.set(script, compiled);
  }
  return compiled;
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

/** A server process of the repository, at `url`. */
export interface Service {
  url: string;
  child: ChildProcess;
  /** The end of what it printed, for failure messages. */
  output: () => string;
}

/** Starts `script` (spawnScript) as a service at `url`, logging warnings only. */
export async function startService(
  script: string,
  url: string,
  env: Record<string, string>,
): Promise<Service> {
  const spawned = await spawnScript(script, { NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env });
  return { url, child: spawned.child, output: () => spawned.output().slice(-3000) };
}

/** Waits until the service's /readyz answers 200; fails at once if it exits. */
export async function waitReady(service: Service, ms = 40_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) throw new Error(`exited early:\n${service.output()}`);
    const ok = await fetch(`${service.url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready in time:\n${service.output()}`);
}

/** Stops the service with `signal` and waits for it to exit (at once if it has). */
export function stopService(service: Service, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
