#!/usr/bin/env node
// Entry of `npm start` and `npm test`. Plain JavaScript that runs on any Node >= 18, so a
// machine with only an older Node and npm works: it brings Node 24 from the npm registry
// (oidc-provider 9 needs >= 22), installs the workspace from the lockfile when needed, and
// runs the real command under Node 24.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE_VERSION = '24.21.0';
const PNPM_VERSION = '10.34.9';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const stateDir = path.join(root, 'node_modules', '.portcullis');

function log(message) {
  console.error(`[portcullis] ${message}`);
}

function findNode24() {
  if (Number(process.versions.node.split('.')[0]) >= 24) return process.execPath;
  const cached = path.join(stateDir, 'node-path');
  if (existsSync(cached)) {
    const known = readFileSync(cached, 'utf8').trim();
    if (existsSync(known)) return known;
  }
  log(
    `Node ${process.versions.node} is too old; fetching Node ${NODE_VERSION} from the npm registry`,
  );
  const result = quietly('npx', ['-y', `node@${NODE_VERSION}`, '-p', 'process.execPath']);
  if (result.status !== 0) process.exit(result.status);
  const found = result.stdout.trim();
  if (!existsSync(found)) throw new Error(`could not obtain Node ${NODE_VERSION}`);
  return found;
}

function run(command, args, env) {
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/**
 * Runs a step whose output a reader does not need (npm's and pnpm's progress and notices):
 * kept, and shown only when the step fails.
 */
function quietly(command, args, env = process.env) {
  const result = spawnSync(command, args, {
    cwd: root,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  const status = result.status ?? 1;
  if (status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    log(`${command} ${args.join(' ')} failed (exit ${status}); its output is above`);
  }
  return { status, stdout: result.stdout };
}

function ensureInstalled(env, node24) {
  const marker = path.join(stateDir, 'installed');
  const lockfile = path.join(root, 'pnpm-lock.yaml');
  const fresh =
    existsSync(marker) &&
    existsSync(path.join(root, 'node_modules', '.bin', 'pnpm')) &&
    statSync(marker).mtimeMs >= statSync(lockfile).mtimeMs;
  if (fresh) return;
  log('installing dependencies from the lockfile (a minute or so the first time)');
  const started = Date.now();
  const { status } = quietly(
    'npx',
    ['-y', `pnpm@${PNPM_VERSION}`, 'install', '--frozen-lockfile'],
    env,
  );
  if (status !== 0) process.exit(status);
  log(`dependencies installed in ${Math.round((Date.now() - started) / 1000)} s`);
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(path.join(stateDir, 'node-path'), node24);
  writeFileSync(marker, new Date().toISOString());
}

/** Runs a command with its stdout and stderr kept together, for printing when it ends. */
function captured(command, args, env, name) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ name, status: 1, output: `${output}${error}\n` }));
    child.on('close', (code) => resolve({ name, status: code ?? 1, output }));
  });
}

async function test(env) {
  const pnpm = path.join(root, 'node_modules', '.bin', 'pnpm');
  // PORTCULLIS_TEST_SCOPE=integration: only the tests that touch a database (CI's second run,
  // on another database); the checks and unit tests do not depend on it.
  const scope = env.PORTCULLIS_TEST_SCOPE ?? 'all';
  if (scope !== 'all' && scope !== 'integration') {
    log(`PORTCULLIS_TEST_SCOPE must be all or integration, not ${scope}`);
    return 64;
  }
  const steps =
    scope === 'all'
      ? [
          ['typecheck', ['run', 'typecheck']],
          ['lint', ['run', 'lint']],
          ['format', ['run', 'format:check']],
        ]
      : [];
  let passed = 0;
  let failed = 0;
  // Side by side (each is mostly one thread), each one's output printed whole when it ends.
  const checks = await Promise.all(steps.map(([name, args]) => captured(pnpm, args, env, name)));
  for (const { name, status, output } of checks) {
    log(`check: ${name}`);
    process.stdout.write(output);
    if (status === 0) passed++;
    else {
      failed++;
      log(`check failed: ${name}`);
    }
  }
  const summary = env.PORTCULLIS_TEST_SUMMARY;
  // Jest's report is read for the counts of the closing line, so it is written every time.
  const jestJson = summary
    ? `${summary}.jest.json`
    : path.join(mkdtempSync(path.join(tmpdir(), 'portcullis-jest-')), 'report.json');
  const jestArgs = ['run', 'jest', ...process.argv.slice(3)];
  if (scope === 'integration') jestArgs.push('--selectProjects', 'integration');
  jestArgs.push('--json', `--outputFile=${jestJson}`);
  const jestStatus = run(pnpm, jestArgs, env);
  if (existsSync(jestJson)) {
    const report = JSON.parse(readFileSync(jestJson, 'utf8'));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    // A suite that fails to load has no failed tests but is a failure all the same.
    failed += report.numRuntimeErrorTestSuites ?? 0;
  } else if (jestStatus !== 0) {
    failed++;
  }
  if (!summary) rmSync(path.dirname(jestJson), { recursive: true, force: true });
  if (jestStatus !== 0 && failed === 0) failed++;
  if (summary) writeFileSync(summary, JSON.stringify({ passed, failed }));
  log(`${passed} passed, ${failed} failed`);
  return failed === 0 && jestStatus === 0 ? 0 : 1;
}

const command = process.argv[2];
if (command !== 'start' && command !== 'test') {
  console.error('usage: bootstrap.mjs start|test');
  process.exit(64);
}
const node24 = findNode24();
const env = {
  ...process.env,
  PATH: [path.dirname(node24), path.join(root, 'node_modules', '.bin'), process.env.PATH].join(
    path.delimiter,
  ),
};
ensureInstalled(env, node24);
if (command === 'start') {
  // One child process running the servers; SIGINT/SIGTERM are passed on so that it shuts
  // down cleanly (closing the embedded database) and its exit status becomes ours.
  // Compiled ahead of time (a second or so), then run as plain JavaScript.
  if (run(node24, ['infra/scripts/build.mjs'], env) !== 0) process.exit(1);
  const child = spawn(node24, ['infra/dist/start-all.js'], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + 15 : 1)));
} else {
  process.exit(await test(env));
}
