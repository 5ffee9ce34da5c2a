/**
 * The browser every browser test drives: `CHROMIUM_PATH` when set, otherwise the Chromium
 * that the npm package @sparticuz/chromium ships inside itself (installed with the workspace,
 * so `npm test` needs no system browser and no download). Its headless shell is unpacked
 * to the temporary directory on first use.
 *
 * The package's recommended flags are not used: they switch off web security (CORS, which
 * these tests check) and allow mixed content. Ours keep the browser's rules as a user has them.
 */
import chromiumPackage from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

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
