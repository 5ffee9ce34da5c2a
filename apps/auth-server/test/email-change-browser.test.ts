import { afterAll, beforeAll, expect, test } from '@jest/globals';
import {
  createUser,
  startMailbox,
  startTestAuthServer,
  type Mailbox,
  type TestAuthServer,
} from '@portcullis/testing';
import {
  type Browser,
  collectRefusals,
  launchBrowser,
  submitPassword,
} from '@portcullis/testing/browser';

// Changing the e-mail address in real Chromium (README "Your account"): the pages' CSP, the
// mailed link opened in another browser, and the new address signing in.

let t: TestAuthServer;
let mailbox: Mailbox;
let browser: Browser;
beforeAll(async () => {
  mailbox = await startMailbox();
  t = await startTestAuthServer({ SMTP_URL: mailbox.url });
  browser = await launchBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await mailbox?.close();
});

/** Collects into `refusals` the page's console messages of content the CSP refused. */
test('request a new address on the account page, confirm it from the mail, sign in with it', async () => {
  const user = await createUser(t);
  const address = `moved-${user.id.slice(0, 8)}@example.com`;
  const refusals: string[] = [];

  const mine = await browser.newContext();
  const page = await mine.newPage();
  collectRefusals(page, refusals);
  await page.goto(`${t.issuer}/account/sign-in`);
  await submitPassword(page, user);
  await page.getByRole('link', { name: 'Change your e-mail address' }).click();
  await page.fill('input[name="email"]', address);
  await page.fill('input[name="current_password"]', user.password);
  await page.getByRole('button', { name: 'Send a confirmation link' }).click();
  await page.getByText(`We sent a link to ${address}`).waitFor();

  const mail = await mailbox.next(address);
  const link = mail.links.find((l) => l.includes('/account/email/confirm'))!;
  // Opened where the mail is read: another browser, not signed in.
  const elsewhere = await browser.newContext();
  const reader = await elsewhere.newPage();
  collectRefusals(reader, refusals);
  await reader.goto(link);
  await reader.getByRole('button', { name: 'Confirm' }).click();
  await reader.getByText(`Your address is now ${address}`).waitFor();
  expect((await mailbox.next(user.email)).subject).toBe('Your e-mail address was changed');

  await reader.goto(`${t.issuer}/account/sign-in`);
  await submitPassword(reader, { email: address, password: user.password });
  await reader.getByRole('heading', { name: 'Your account' }).waitFor();
  expect(await reader.locator('main').innerText()).toContain(`Signed in as ${address}`);
  expect(refusals).toEqual([]);
  await mine.close();
  await elsewhere.close();
});
