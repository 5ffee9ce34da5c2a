/**
 * The reader's browser in the docs test (readme.test.ts): real Chromium going through the
 * auth server's pages as the README tells a reader to, as the demo users. An authenticator
 * app is played from the key its set-up page shows (kept per user for later sign-ins).
 */
import type { Browser, BrowserContext, Page } from '@portcullis/testing/browser';
import { totpCode } from '@portcullis/testing';

/** The demo users' passwords, as the README lists them. */
const PASSWORDS: Record<string, string> = {
  'admin@example.com': 'portcullis-admin',
  'editor@example.com': 'portcullis-editor',
  'viewer@example.com': 'portcullis-viewer',
};

const PERIOD = 30_000;

export class ReaderBrowser {
  /** One browser profile, as a reader has: its session carries from one sign-in to the next. */
  private context: BrowserContext | undefined;
  private readonly secrets = new Map<string, string>();
  private readonly usedPeriods = new Map<string, Set<number>>();

  constructor(private readonly browser: Browser) {}

  /** A code of the user's app that was not used yet (the server takes one period of drift). */
  private code(email: string): string {
    const used = this.usedPeriods.get(email) ?? new Set<number>();
    this.usedPeriods.set(email, used);
    for (const offset of [0, PERIOD, -PERIOD]) {
      const at = Date.now() + offset;
      const period = Math.floor(at / PERIOD);
      if (!used.has(period)) {
        used.add(period);
        return totpCode(this.secrets.get(email)!, at);
      }
    }
    throw new Error(`no unused authenticator code for ${email} in this minute`);
  }

  /**
   * Goes through the pages from `url` (a sign-in, or the device page) until `done` holds
   * for the page's URL or no step is left; signs in as the login_hint, or `email`.
   */
  async follow(url: string, options: { email?: string; done?: (url: URL) => boolean } = {}) {
    this.context ??= await this.browser.newContext();
    const page = await this.context.newPage();
    const seen: string[] = [];
    let email = options.email ?? new URL(url).searchParams.get('login_hint') ?? '';
    try {
      await page.goto(url);
      for (let step = 0; step < 20; step++) {
        if (options.done?.(new URL(page.url()))) return;
        seen.push(`${page.url()}: ${(await page.locator('h1').first().textContent()) ?? ''}`);
        const action = await this.step(page, email);
        if (!action) return;
        if (action.email) email = action.email;
      }
      throw new Error('more than 20 pages');
    } catch (error) {
      const body = await page
        .locator('body')
        .innerText()
        .catch(() => '');
      throw new Error(
        `the browser stopped at ${page.url()}: ${(error as Error).message}\n` +
          `pages: ${seen.join(' | ')}\nlast page: ${body.slice(0, 500)}`,
      );
    } finally {
      await page.close();
    }
  }

  /** Does what the page asks; undefined when it asks nothing a reader would do. */
  private async step(page: Page, email: string): Promise<{ email?: string } | undefined> {
    const visible = async (selector: string) => (await page.locator(selector).count()) > 0;
    const submit = async (name: string) => {
      await Promise.all([
        page.waitForNavigation({ waitUntil: 'load' }),
        page.getByRole('button', { name, exact: true }).first().click(),
      ]);
    };
    if (await visible('input[name="password"]')) {
      const typed = (await page.inputValue('input[name="email"]')) || email;
      if (!PASSWORDS[typed]) throw new Error(`no password known for "${typed}"`);
      await page.fill('input[name="email"]', typed);
      await page.fill('input[name="password"]', PASSWORDS[typed]);
      await submit('Sign in');
      return { email: typed };
    }
    if (await visible('#totp-secret')) {
      const secret = (await page.locator('#totp-secret').innerText()).replaceAll(' ', '');
      this.secrets.set(email, secret);
      this.usedPeriods.delete(email);
      await page.fill('input[name="code"]', this.code(email));
      await submit('Turn on');
      return {};
    }
    if (await visible('.recovery-code')) {
      await Promise.all([
        page.waitForNavigation({ waitUntil: 'load' }),
        page.locator('main a').last().click(),
      ]);
      return {};
    }
    if (await visible('label[for="code"]')) {
      if (!this.secrets.has(email)) throw new Error(`${email} has no authenticator app here`);
      await page.fill('input[name="code"]', this.code(email));
      await submit('Verify');
      return {};
    }
    for (const name of ['Set up an authenticator app', 'Allow', 'Continue']) {
      if ((await page.getByRole('button', { name, exact: true }).count()) > 0) {
        await submit(name);
        return {};
      }
    }
    return undefined;
  }
}
