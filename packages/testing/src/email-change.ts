import { browser, type Browser } from './cookie-jar.js';
import type { Mailbox, ReceivedMail } from './mailbox.js';
import { accountSignIn } from './mfa.js';

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

export interface EmailChangeAsked {
  /** The browser that asked, signed in at the account page. */
  b: Browser;
  /** The confirm link mailed to the new address, and its token. */
  confirmLink: string;
  token: string;
  /** The notice mailed to the old address, with its cancel link. */
  notice: ReceivedMail;
}

/**
 * Signs `user` in at the account page (in `b`, a new browser by default) and asks with the
 * password to move the account to `address` (README "Your account"); throws unless the page
 * answers 200 and both mails arrive.
 */
export async function askEmailChange(
  t: { issuer: string },
  mailbox: Pick<Mailbox, 'next'>,
  user: { email: string; password: string },
  address: string,
  b: Browser = browser(),
): Promise<EmailChangeAsked> {
  const page = await accountSignIn(t, b, user);
  const res = await b.postForm(`${t.issuer}/account/email`, {
    csrf: csrfOf(page),
    email: address,
    current_password: user.password,
  });
  if (res.status !== 200) throw new Error(`the e-mail change answered ${res.status}`);
  const mail = await mailbox.next(address);
  const confirmLink = mail.links.find((l) => l.includes('/account/email/confirm'));
  if (!confirmLink) throw new Error(`no confirm link in the mail to ${address}`);
  const notice = await mailbox.next(user.email);
  return { b, confirmLink, token: new URL(confirmLink).searchParams.get('token') ?? '', notice };
}
