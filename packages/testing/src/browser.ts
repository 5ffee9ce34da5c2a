// The packaged Chromium and its libraries, unpacked once (README: the web demo's tests). Its
// recommended flags are not used: they switch off web security (CORS), which the tests check.
import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { brotliDecompressSync, createBrotliDecompress } from 'node:zlib';
import { afterAll, beforeAll, expect } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestAuthServer, type TestAuthServer } from './auth-server.js';
import { startMailbox, type Mailbox } from './mailbox.js';
import { freePort } from './net.js';
import { browser as cookieBrowser } from './cookie-jar.js';
import { createUser } from './factories.js';
import { enrolTotp, totpCode } from './mfa.js';

export type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';

const ARGS = [
  '--no-sandbox',
  '--no-zygote',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The oldest glibc the package's library pack runs on (it is built on Amazon Linux 2023). */
export const PACK_GLIBC = { major: 2, minor: 34 };

interface PackagedChromium {
  executable: string;
  libraries: string | undefined;
}

function packageFiles(): { bin: string; version: string } {
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  const root = path.join(path.dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { bin: path.join(root, 'bin'), version };
}

/** True when this process runs on glibc `major.minor` or newer (false on musl and others). */
export function glibcAtLeast({ major, minor }: { major: number; minor: number }): boolean {
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  const [have = 0, haveMinor = 0] = (report.header?.glibcVersionRuntime ?? '0.0')
    .split('.')
    .map(Number);
  return have > major || (have === major && haveMinor >= minor);
}

async function untar(archive: Buffer, dir: string): Promise<void> {
  for (let at = 0; at + 512 <= archive.length;) {
    const header = archive.subarray(at, at + 512);
    const field = (start: number, length: number) =>
      header.toString('latin1', start, start + length).replace(/\0.*$/s, '');
    const name = path.posix.join(field(345, 155), field(0, 100));
    if (name === '.') break; // the two zero blocks that end an archive
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    if (type === '0' || type === '') {
      const file = path.join(dir, name);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, archive.subarray(at + 512, at + 512 + size));
      await chmod(file, parseInt(field(100, 8).trim(), 8) & 0o777);
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
}

/** Unpacks the headless shell, its graphics and its libraries into `dir`. */
async function unpack(bin: string, dir: string): Promise<void> {
  const executable = path.join(dir, 'chromium');
  await pipeline(
    createReadStream(path.join(bin, 'chromium.br')),
    createBrotliDecompress(),
    createWriteStream(executable, { mode: 0o700 }),
  );
  for (const pack of ['swiftshader.tar.br', 'al2023.tar.br']) {
    await untar(brotliDecompressSync(await readFile(path.join(bin, pack))), dir);
  }
}

/** Unpacked beside its final place and renamed there, so a parallel worker sees all or none. */
async function packagedChromium(): Promise<PackagedChromium> {
  const { bin, version } = packageFiles();
  const dir = path.join(tmpdir(), `portcullis-chromium-${version}`);
  if (!existsSync(dir)) {
    const partial = await mkdtemp(`${dir}-partial-`);
    try {
      await unpack(bin, partial);
      await rename(partial, dir);
    } catch (error) {
      await rm(partial, { recursive: true, force: true });
      if (!existsSync(dir)) throw error; // else another worker was first
    }
  }
  return {
    executable: path.join(dir, 'chromium'),
    libraries: glibcAtLeast(PACK_GLIBC) ? path.join(dir, 'lib') : undefined,
  };
}

async function chosenChromium(environment: NodeJS.ProcessEnv): Promise<PackagedChromium> {
  const chosen = environment['CHROMIUM_PATH'];
  if (chosen) return { executable: chosen, libraries: undefined };
  try {
    return await packagedChromium();
  } catch (error) {
    throw new Error(
      `no Chromium for the browser tests: @sparticuz/chromium could not unpack its browser ` +
        `(${(error as Error).message}); set CHROMIUM_PATH to a Chromium binary`,
    );
  }
}

export interface ChromiumLaunch {
  executablePath: string;
  env: NodeJS.ProcessEnv;
  libraries: string | undefined;
}

export async function chromiumLaunch(
  // eslint-disable-next-line no-restricted-syntax
  environment: NodeJS.ProcessEnv = process.env,
): Promise<ChromiumLaunch> {
  const { executable, libraries } = await chosenChromium(environment);
  const { LD_LIBRARY_PATH: current, ...env } = environment;
  const searched = [libraries, current].filter(Boolean).join(':');
  return {
    executablePath: executable,
    env: searched ? { ...env, LD_LIBRARY_PATH: searched } : env,
    libraries,
  };
}

/** Launches headless Chromium; fails loudly (never skips) when there is none. */
export async function launchBrowser(): Promise<Browser> {
  const { executablePath, env, libraries } = await chromiumLaunch();
  try {
    return await chromium.launch({ executablePath, env, headless: true, args: ARGS });
  } catch (error) {
    const linked = libraries ? `with the libraries in ${libraries}` : `with the system's libraries`;
    throw new Error(
      `Chromium at ${executablePath} did not start (${linked}): ${(error as Error).message}; ` +
        `set CHROMIUM_PATH to a Chromium binary that runs here`,
    );
  }
}

/** A CDP virtual authenticator: a platform one with discoverable credentials that verifies its user. */
export async function addVirtualAuthenticator(
  page: Page,
  /** e.g. `{ defaultBackupEligibility: true, defaultBackupState: true }`: a synced passkey. */
  options: Record<string, unknown> = {},
) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
      ...options,
    },
  });
  return { cdp, authenticatorId };
}

/** The README's pictures (docs/img/), as readmeScreenshot takes them. */
export const README_IMG = new URL('../../../docs/img/', import.meta.url);

/** Writes the picture only when missing or with `UPDATE_SCREENSHOTS=1`, so tests leave the tree clean. */
export async function readmeScreenshot(
  target: Pick<Page, 'screenshot'>,
  file: URL,
  options: Parameters<Page['screenshot']>[0] = {},
): Promise<void> {
  // eslint-disable-next-line no-restricted-syntax
  if (existsSync(file) && process.env['UPDATE_SCREENSHOTS'] !== '1') return;
  await mkdir(new URL('.', file), { recursive: true });
  await target.screenshot({ ...options, path: file.pathname });
}

export interface BrowserSignIn {
  auth: TestAuthServer;
  browser: Browser;
  /** A page of the test's own that answers "signed in": the clients' redirect URI. */
  redirectUri: string;
  close(): Promise<void>;
}

/** Issuer `http://localhost:<port>`: WebAuthn wants a secure context whose host is the RP id. */
export async function startBrowserSignIn(env: Record<string, string> = {}): Promise<BrowserSignIn> {
  const port = await freePort();
  const auth = await startTestAuthServer({
    ...env,
    AUTH_PORT: String(port),
    ISSUER: `http://localhost:${port}`,
  });
  const app = createServer((_req, res) => res.end('signed in'));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const redirectUri = `http://localhost:${(app.address() as AddressInfo).port}/callback`;
  const browser = await launchBrowser().catch(async (error: unknown) => {
    await new Promise((resolve) => app.close(resolve));
    await auth.close();
    throw error;
  });
  return {
    auth,
    browser,
    redirectUri,
    async close() {
      await browser.close();
      await new Promise((resolve) => app.close(resolve));
      await auth.close();
    },
  };
}

/**
 * Started before the file's tests (up to 90 s: the first start unpacks Chromium), closed after;
 * `env`: the auth server's settings, read when it starts (after earlier beforeAll hooks).
 */
export function browserSignInForFile(
  started: (stack: BrowserSignIn) => void,
  env: () => Record<string, string> = () => ({}),
): void {
  let stack: BrowserSignIn | undefined;
  beforeAll(async () => {
    stack = await startBrowserSignIn(env());
    started(stack);
  }, 90_000);
  afterAll(() => stack?.close());
}

/**
 * browserSignInForFile whose auth server mails to a mailbox of the file's (SMTP_URL), started
 * before it and closed after it.
 */
export function browserSignInWithMailForFile(
  started: (stack: BrowserSignIn & { mailbox: Mailbox }) => void,
  env: () => Record<string, string> = () => ({}),
): void {
  let mailbox: Mailbox | undefined;
  let stack: BrowserSignIn | undefined;
  beforeAll(async () => {
    mailbox = await startMailbox();
    stack = await startBrowserSignIn({ ...env(), SMTP_URL: mailbox.url });
    started({ ...stack, mailbox });
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
    await mailbox?.close();
  });
}

/** Collects the page's CSP refusals (console messages) into `refusals`: a strict page has none. */
export function collectRefusals(page: Page, refusals: string[]): void {
  page.on('console', (m) => {
    if (/Content Security Policy|Refused/i.test(m.text())) refusals.push(m.text());
  });
}

/** Types `user`'s email and password into the page's sign-in form and submits it. */
export async function submitPassword(
  page: Page,
  user: { email: string; password: string },
): Promise<void> {
  await page.fill('input[name="email"]', user.email);
  await page.fill('input[name="password"]', user.password);
  await page.click('form:has(input[name="password"]) button[type="submit"]');
}

/** An administrator with an authenticator app: the console's user (docs/console.md). */
export async function consoleAdmin(t: TestAuthServer): Promise<ConsoleAdmin> {
  const user = await createUser(t, ['admin']);
  // The enrolment spends the previous period's code: each sign-in then uses a later one.
  let period = 0;
  const { secret } = await enrolTotp(t, cookieBrowser(), user, async () => {
    // The server takes the periods next to its own: near a period's end, the previous one
    // could be two periods old by the time the code arrives.
    if (Date.now() % 30_000 > 27_000) await new Promise((r) => setTimeout(r, 3_500));
    period = Math.floor(Date.now() / 30_000) - 1;
    return period * 30_000;
  });
  return {
    ...user,
    secret,
    nextCode() {
      period = Math.max(period + 1, Math.floor(Date.now() / 30_000));
      return totpCode(secret, period * 30_000);
    },
  };
}

export interface ConsoleAdmin {
  id: string;
  email: string;
  password: string;
  roles: string[];
  secret: string;
  /** A code of a period no earlier sign-in used (codes are single-use). */
  nextCode(): string;
}

/** Signs `admin` in to the console at `path`, password then code; waits for the console page. */
export async function consoleSignIn(
  page: Page,
  t: Pick<TestAuthServer, 'issuer'>,
  admin: ConsoleAdmin,
  path = '/console/status',
): Promise<void> {
  await page.goto(`${t.issuer}${path}`);
  await submitPassword(page, admin);
  await page.fill('input[name="code"]', admin.nextCode());
  await page.click('form:has(input[name="code"]) button[type="submit"]');
  await page.waitForURL(
    (u) => u.pathname.startsWith('/console/') && !u.pathname.startsWith('/console/callback'),
  );
}

/**
 * `run` on a console page at `path` of a new administrator (signed in with the second
 * factor); then the page must have had no CSP refusal. Its browser context is closed after.
 */
export async function asConsoleAdmin(
  t: Pick<TestAuthServer, 'issuer' | 'admin'>,
  browser: Browser,
  path: string,
  run: (page: Page, admin: ConsoleAdmin) => Promise<void>,
): Promise<void> {
  const admin = await consoleAdmin(t as TestAuthServer);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const refusals: string[] = [];
  collectRefusals(page, refusals);
  try {
    await consoleSignIn(page, t, admin, path);
    await run(page, admin);
    expect(refusals).toEqual([]);
  } finally {
    await context.close();
  }
}
