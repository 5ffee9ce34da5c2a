import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { createUser, startMailbox, type Mailbox } from '@portcullis/testing';
import {
  type Browser,
  collectRefusals,
  launchBrowser,
  submitPassword,
} from '@portcullis/testing/browser';

// Changing the e-mail address in real Chromium (README "Your account"): the pages' CSP, the
// mailed link opened in another browser, and the new address signing in.

type User = Awaited<ReturnType<typeof createUser>>;

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

/**
 * In a new browser profile, `user` signs in at the account page and asks with the password to
 * move the account to `address`; returns the profile, its page and the confirm link mailed there.
 */
async function askForAddress(user: User, address: string, refusals: string[]) {
  const context = await browser.newContext();
  const page = await context.newPage();
  collectRefusals(page, refusals);
  await page.goto(`${t.issuer}/account/sign-in`);
  await submitPassword(page, user);
  await page.getByRole('link', { name: 'Change your e-mail address' }).click();
  await page.fill('input[name="email"]', address);
  await page.fill('input[name="current_password"]', user.password);
  await page.getByRole('button', { name: 'Send a confirmation link' }).click();
  await page.getByText(`We sent a link to ${address}`).waitFor();
  const link = (await mailbox.next(address)).links.find((l) =>
    l.includes('/account/email/confirm'),
  )!;
  return { context, page, link };
}

test('request a new address on the account page, confirm it from the mail, sign in with it', async () => {
  const user = await createUser(t);
  const address = `moved-${user.id.slice(0, 8)}@example.com`;
  const refusals: string[] = [];

  const { context: mine, link } = await askForAddress(user, address, refusals);
  // Opened where the mail is read: another browser, not signed in.
  const elsewhere = await browser.newContext();
  const reader = await elsewhere.newPage();
  collectRefusals(reader, refusals);
  await reader.goto(link);
  await reader.getByRole('button', { name: 'Confirm' }).click();
  await reader.getByText(`Your address is now ${address}`).waitFor();
  expect((await mailbox.next(user.email)).subject).toBe(
    'A change of your e-mail address was requested',
  );
  expect((await mailbox.next(user.email)).subject).toBe('Your e-mail address was changed');

  await reader.goto(`${t.issuer}/account/sign-in`);
  await submitPassword(reader, { email: address, password: user.password });
  await reader.getByRole('heading', { name: 'Your account' }).waitFor();
  expect(await reader.locator('main').innerText()).toContain(`Signed in as ${address}`);
  expect(refusals).toEqual([]);
  await mine.close();
  await elsewhere.close();
});

// docs/security.md "What a recovery ends": the old address's link stops a change it did not ask for.
test('someone with the password asks for their address; the owner cancels from the old address; the confirm link then fails', async () => {
  const user = await createUser(t);
  const address = `thief-${user.id.slice(0, 8)}@example.com`;
  const refusals: string[] = [];

  const {
    context: thiefContext,
    page: thief,
    link: confirmLink,
  } = await askForAddress(user, address, refusals);

  // The owner reads the notice at the old address and opens its link.
  const notice = await mailbox.next(user.email);
  expect(notice.subject).toBe('A change of your e-mail address was requested');
  const cancelLink = notice.links.find((l) => l.includes('/account/email/cancel'))!;
  const ownerContext = await browser.newContext();
  const owner = await ownerContext.newPage();
  collectRefusals(owner, refusals);
  await owner.goto(cancelLink);
  expect(await owner.locator('main').innerText()).toContain(address);
  await owner.getByRole('button', { name: 'Cancel the change' }).click();
  await owner.getByText(`your address stays ${user.email}`).waitFor();
  await owner.getByRole('link', { name: 'Choose a new password' }).click();
  await owner.waitForURL(`${t.issuer}/password/forgot`);

  // The thief's confirm link is dead, and so is their session.
  await thief.goto(confirmLink);
  await thief.getByText('This link has expired or was already used').waitFor();
  expect((await thief.goto(`${t.issuer}/account`))?.status()).toBe(401);
  expect((await t.admin('GET', `/admin/users/${user.id}`)).body.email).toBe(user.email);
  expect(refusals).toEqual([]);
  await thiefContext.close();
  await ownerContext.close();
});
