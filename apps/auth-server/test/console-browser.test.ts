import { expect, test } from '@jest/globals';
import {
  type Browser,
  browserSignInForFile,
  collectRefusals,
  consoleAdmin,
  consoleSignIn,
} from '@portcullis/testing/browser';
import type { TestAuthServer } from '@portcullis/testing';

// The admin console in real Chromium (docs/console.md): its sign-in, CSP and each section.

let t: TestAuthServer;
let browser: Browser;
browserSignInForFile((stack) => ({ auth: t, browser } = stack));

test('an administrator signs in with a second factor and sees the status page', async () => {
  const admin = await consoleAdmin(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  const refusals: string[] = [];
  collectRefusals(page, refusals);
  try {
    await consoleSignIn(page, t, admin);
    await page.getByRole('heading', { name: 'Status' }).waitFor();
    expect(await page.textContent('header')).toContain(admin.email);
    const cookies = await context.cookies();
    // The tokens stay on the server's side: the browser holds only sealed cookies.
    expect(JSON.stringify(cookies)).not.toMatch(/eyJ/);
    expect(refusals).toEqual([]);
  } finally {
    await context.close();
  }
}, 60_000);
