import { expect, test } from '@jest/globals';
import {
  type Browser,
  browserSignInForFile,
  collectRefusals,
  consoleAdmin,
  consoleSignIn,
} from '@portcullis/testing/browser';
import type { TestAuthServer } from '@portcullis/testing/auth-server';

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

test('signing out revokes the console’s token and ends this browser’s sign-in at the authorization server', async () => {
  const admin = await consoleAdmin(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await consoleSignIn(page, t, admin);
    const sealed = (await context.cookies()).find((c) => c.name === 'portcullis_console');
    expect(sealed).toBeDefined();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'You are signed out of the console' }).waitFor();
    expect((await context.cookies()).map((c) => c.name)).not.toContain('portcullis_console');

    // A copy of the cookie taken before: its token is revoked, so the admin API refuses it.
    const copied = await fetch(`${t.issuer}/console/users`, {
      headers: { cookie: `portcullis_console=${sealed!.value}` },
      redirect: 'manual',
    });
    expect(copied.status).toBe(401);
    expect(await copied.text()).toContain('Your console session has ended');

    // The next sign-in starts from the password, not from a remembered session.
    await page.goto(`${t.issuer}/console/status`);
    await page.locator('input[name="password"]').waitFor();
  } finally {
    await context.close();
  }
}, 60_000);
