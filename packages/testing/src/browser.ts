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
import chromiumPackage from '@sparticuz/chromium';
import { chromium, type Browser, type Page } from 'playwright-core';

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

/**
 * A README picture (`file`, a URL in the tree) taken from `target`: written when missing or
 * when `UPDATE_SCREENSHOTS=1`, never on an ordinary run, so tests leave the tree clean.
 */
export async function readmeScreenshot(
  target: Pick<Page, 'screenshot'>,
  file: URL,
  options: Parameters<Page['screenshot']>[0] = {},
): Promise<void> {
  // eslint-disable-next-line no-restricted-syntax
  if (existsSync(file) && process.env['UPDATE_SCREENSHOTS'] !== '1') return;
  await target.screenshot({ ...options, path: file.pathname });
}
