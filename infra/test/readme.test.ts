/**
 * The README runs as written (docs/readme-test.md): its shell blocks, in order, in one
 * bash session against a stack started as `npm start` starts it (infra/scripts/start-all.ts)
 * on free ports and an empty data directory, with the variables the README tells a reader
 * to set. Each `# →` line is output its command must print. The reader's browser steps
 * are Chromium's: `npm run authorize` opens its sign-in through BROWSER, and a
 * `<!-- docs-test: … -->` line before a block names any other. On PostgreSQL and Redis
 * when DATABASE_URL and REDIS_URL are set.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { deleteRedisKeys, freePort } from '@portcullis/testing';
import { launchBrowser, type Browser } from '@portcullis/testing/browser';
import {
  parseBlocks,
  matchesExpectation,
  type Block,
  type Command,
} from './helpers/readme-blocks.js';
import { ReaderBrowser } from './helpers/readme-browser.js';
import { root, spawnScript, waitFor, type Spawned } from './helpers/processes.js';

const README = path.join(root, 'README.md');
const blocks = parseBlocks(readFileSync(README, 'utf8'));
const COMMAND_TIMEOUT = 90_000;
const redisUrl = process.env['DATABASE_URL'] ? process.env['REDIS_URL'] : undefined;
const REDIS_KEY_PREFIX = `portcullis-readme-${randomBytes(6).toString('hex')}:`;

/** Blocks a test run cannot do, by their first command, and why (each also marked in the README). */
const SKIPPED: Record<string, string> = {
  'npm start': 'the test starts the stack itself, through the same start-all script',
  'DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm test':
    'the whole test suite',
  'docker compose -f infra/docker/compose.yaml up --build': 'needs Docker',
  'infra/scripts/generate-secrets.sh compose auth.example.org api.example.org you@example.org > infra/docker/.env':
    'needs Docker and a server with public host names',
  'docker build -f infra/docker/Dockerfile -t ghcr.io/your-org/portcullis:0.1.0 . && docker push ghcr.io/your-org/portcullis:0.1.0':
    'needs Docker, a registry and Kubernetes',
  'IAT=$(npm run -s admin -- registration:token --json | json initial_access_token)':
    'needs the auth server restarted with REGISTRATION=token',
};

/** A block's first command line without its comment. */
const firstLine = (block: Block) =>
  (block.commands[0]?.text.split('\n')[0] ?? '').replace(/\s+#.*$/, '');

const label = (block: Block) => `README.md:${block.line} ${firstLine(block).slice(0, 70)}`;

/** One bash session fed command by command; stdout and stderr together. */
class Shell {
  private output = '';
  private waiting: (() => void) | undefined;
  readonly child: ChildProcessWithoutNullStreams;
  private count = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    // A process group of its own, so that whatever a command left running ends with it.
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      stream.on('data', (d: Buffer) => {
        this.output += d.toString();
        this.waiting?.();
      });
    }
  }

  /** Runs `text` (stdin closed) and returns what it printed and its status. */
  async run(text: string, timeout = COMMAND_TIMEOUT): Promise<{ output: string; status: number }> {
    const marker = `@@done-${++this.count}-${randomBytes(4).toString('hex')}@@`;
    this.output = '';
    this.child.stdin.write(`{\n${text}\n} </dev/null 2>&1\nprintf '\\n${marker}%s\\n' "$?"\n`);
    const deadline = Date.now() + timeout;
    for (;;) {
      const at = this.output.indexOf(marker);
      if (at >= 0) {
        const status = Number(/^(\d+)/.exec(this.output.slice(at + marker.length))?.[1] ?? 'NaN');
        if (!Number.isNaN(status))
          return { output: this.output.slice(0, at).replace(/\n$/, ''), status };
      }
      if (Date.now() > deadline || browserFailure)
        throw new Error(
          browserFailure
            ? `the browser step failed; printed so far:\n${this.output}`
            : `no end within ${timeout / 1000} s; printed so far:\n${this.output}`,
        );
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 200);
      });
    }
  }

  /** The value of a shell expression, such as `$USER_CODE`. */
  async value(expression: string): Promise<string> {
    return (await this.run(`printf '%s' "${expression}"`)).output;
  }
}

let workDir: string;
let stack: Spawned;
let database: TestDatabase | undefined;
let shell: Shell;
let browser: Browser;
let reader: ReaderBrowser;
let opener: Server;
let browserFailure: Error | undefined;
let issuer: string;

beforeAll(async () => {
  // The reader's checkout: the repository's files through links, the data directory and
  // whatever the README's commands write of its own.
  mkdirSync(path.dirname(PROGRESS), { recursive: true });
  workDir = mkdtempSync(path.join(tmpdir(), 'portcullis-readme-'));
  for (const entry of readdirSync(root)) {
    if (!['data', '.git', '.test-output'].includes(entry))
      symlinkSync(path.join(root, entry), path.join(workDir, entry));
  }
  const [auth, api, admin, web] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  issuer = `http://localhost:${auth}`;
  database = process.env['DATABASE_URL'] ? await createTestDatabase({ migrate: false }) : undefined;
  const settings = {
    AUTH_PORT: String(auth),
    API_PORT: String(api),
    ADMIN_PORT: String(admin),
    WEB_PORT: String(web),
    ISSUER: issuer,
  };
  stack = await spawnScript('infra/scripts/start-all.ts', {
    ...settings,
    DATA_DIR: path.join(workDir, 'data'),
    ...(database?.url ? { DATABASE_URL: database.url } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX } : {}),
  });
  await waitFor(() => (stack.output().includes('Portcullis is up') ? true : undefined), 60_000);
  const secret = /client_secret (\S+)/.exec(stack.output())?.[1];
  if (!secret) throw new Error(`no demo-service secret printed:\n${stack.output()}`);

  browser = await launchBrowser();
  reader = new ReaderBrowser(browser);
  // BROWSER, as `npm run authorize` uses it: hands the sign-in URL to this test's Chromium.
  opener = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x').searchParams.get('url') ?? '';
    res.end();
    reader
      .follow(url, { done: (u) => u.hostname === '127.0.0.1' })
      .catch((error: Error) => (browserFailure = error));
  });
  await new Promise<void>((resolve) => opener.listen(0, '127.0.0.1', resolve));
  const openScript = path.join(workDir, 'open-in-test-browser');
  writeFileSync(
    openScript,
    `#!/bin/sh\nexec curl -s -G --data-urlencode "url=$1" http://127.0.0.1:${(opener.address() as AddressInfo).port}/\n`,
  );
  chmodSync(openScript, 0o755);

  shell = new Shell(workDir, {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    ...settings,
    SECRET: secret,
    BROWSER: openScript,
  });
}, 120_000);

afterAll(async () => {
  if (shell?.child.pid) {
    try {
      process.kill(-shell.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  opener?.close();
  await browser?.close();
  if (stack) {
    stack.child.kill('SIGTERM');
    await stack.exited;
  }
  await database?.close();
  if (redisUrl) await deleteRedisKeys(redisUrl, REDIS_KEY_PREFIX);
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}, 60_000);

/** Each command's output as it ends, for a look while the test runs (jest reports at the end). */
const PROGRESS = path.join(root, '.test-output', `readme-${process.pid}.log`);
function progress(text: string) {
  appendFileSync(PROGRESS, text);
}

/** The browser step a directive names, done before its block. */
async function browserStep(directive: string) {
  const [action, ...args] = directive.split(/\s+/);
  if (action === 'device-sign-in') {
    const [code, email] = [await shell.value(args[0]!), args[1]!];
    await reader.follow(`${issuer}/device?user_code=${encodeURIComponent(code)}`, { email });
    return;
  }
  throw new Error(`unknown docs-test directive "${directive}"`);
}

function describeFailure(command: Command, problem: string, output: string) {
  return (
    `README.md:${command.line} \`${command.text.split('\n')[0]}\`: ${problem}\n` +
    `--- output ---\n${output.slice(0, 3000)}` +
    (browserFailure ? `\n--- the browser ---\n${browserFailure.message}` : '')
  );
}

describe('README.md runs as written', () => {
  test('every block that does not run here is marked and listed', () => {
    const marked = blocks.filter((b) => b.directive?.startsWith('skip')).map(firstLine);
    expect(marked.sort()).toEqual(Object.keys(SKIPPED).sort());
  });

  for (const block of blocks) {
    const run = block.directive?.startsWith('skip') ? test.skip : test;
    run(
      label(block),
      async () => {
        if (block.directive) await browserStep(block.directive);
        for (const command of block.commands) {
          browserFailure = undefined;
          const { output, status } = await shell.run(command.text).catch((error: Error) => {
            throw new Error(describeFailure(command, error.message, ''));
          });
          progress(`README.md:${command.line} exit ${status}\n${output.slice(0, 1500)}\n`);
          if (status !== command.exit)
            throw new Error(
              describeFailure(command, `exit ${status}, expected ${command.exit}`, output),
            );
          for (const expected of command.expects) {
            if (!matchesExpectation(expected, output))
              throw new Error(
                describeFailure(command, `expected the output to contain\n  ${expected}`, output),
              );
          }
        }
      },
      COMMAND_TIMEOUT * 2,
    );
  }
});
