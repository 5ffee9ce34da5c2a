/**
 * The browser every browser test drives: `CHROMIUM_PATH` when set, otherwise the Chromium
 * that the npm package @sparticuz/chromium ships inside itself (installed with the workspace,
 * so `npm test` needs no system browser and no download). Its headless shell is unpacked
 * to the temporary directory on first use.
 *
 * The package's recommended flags are not used: they switch off web security (CORS, which
 * these tests check) and allow mixed content. Ours keep the browser's rules as a user has them.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import chromiumPackage from '@sparticuz/chromium';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestAuthServer, type TestAuthServer } from './auth-server.js';
import { freePort } from './net.js';

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

async function executablePath(): Promise<string> {
  // A test helper, as under test/ (where the lint rule allows reading the environment).
  // eslint-disable-next-line no-restricted-syntax
  const chosen = process.env['CHROMIUM_PATH'];
  if (chosen) return chosen;
  try {
    return await chromiumPackage.executablePath();
  } catch (error) {
    throw new Error(
      `no Chromium for the browser tests: @sparticuz/chromium could not unpack its browser ` +
        `(${(error as Error).message}); set CHROMIUM_PATH to a Chromium binary`,
    );
  }
}

/** Launches headless Chromium; fails loudly (never skips) when there is none. */
export async function launchBrowser(): Promise<Browser> {
  const path = await executablePath();
  try {
    return await chromium.launch({ executablePath: path, headless: true, args: ARGS });
  } catch (error) {
    throw new Error(`Chromium at ${path} did not start: ${(error as Error).message}`);
  }
}

/**
 * A CDP virtual authenticator on `page` (WebAuthn in the real browser, no device): a
 * platform authenticator holding discoverable credentials that verifies its user. Returns
 * its id and the CDP session that drives it.
 */
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

/**
 * A README picture (`file`, a URL in the tree, e.g. `new URL('x.png', README_IMG)`) taken
 * from `target`: written when missing or when `UPDATE_SCREENSHOTS=1`, never on an ordinary
 * run, so tests leave the tree clean.
 */
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

/**
 * What the sign-in pages are driven with in Chromium: an auth server whose issuer is
 * `http://localhost:<port>` (WebAuthn wants a secure context whose host is the RP id,
 * and localhost is one), a callback page to land on, and the browser.
 */
export async function startBrowserSignIn(): Promise<BrowserSignIn> {
  const port = await freePort();
  const auth = await startTestAuthServer({
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
