import type { AccountTokens, AccountsRepo, TokenGrant, User } from '@portcullis/accounts';
import type { AuthConfig } from '../../kernel/config.js';
import type { Mailer } from '../mail/mailer.js';
import type { Ui } from '../ui/index.js';

/** An interaction uid as oidc-provider makes them; anything else is dropped from links. */
export const INTERACTION_UID = /^[A-Za-z0-9_-]{10,64}$/;

export interface VerificationMail {
  /** A new link for `user` (earlier ones stop working), mailed in `ui`'s language. */
  sendLink(user: User, ui: Ui, interaction?: string | undefined): Promise<void>;
  /** Tells the owner of a taken address that someone tried to sign up with it. */
  sendTaken(user: User, ui: Ui, interaction?: string | undefined): Promise<void>;
  /** What a link grants, without using it (the confirm page: mail scanners fetch links). */
  peek(token: string): Promise<TokenGrant | undefined>;
  /** Uses the link: of two racing uses, one wins. */
  consume(token: string): Promise<TokenGrant | undefined>;
  /** The administrator's resend: a new link unless the address is proven or the user unknown. */
  resend(userId: string, ui: Ui): Promise<'sent' | 'verified' | 'not_found'>;
}

export interface VerificationMailDeps {
  accountTokens: AccountTokens;
  accounts: Pick<AccountsRepo, 'get'>;
  mailer: Mailer;
  issuer: string;
  selfService: Pick<AuthConfig['selfService'], 'emailVerificationTtl'>;
}

// Plain text: i18next's HTML escaping is for pages, not for a mail's text.
const plain = { interpolation: { escapeValue: false } };

export function createVerificationMail(deps: VerificationMailDeps): VerificationMail {
  const ttl = deps.selfService.emailVerificationTtl;
  const hours = Math.round((ttl / 3600) * 10) / 10;
  const withInteraction = (url: URL, interaction: string | undefined) => {
    if (interaction && INTERACTION_UID.test(interaction))
      url.searchParams.set('interaction', interaction);
    return url;
  };
  const mail: VerificationMail = {
    async sendLink(user, { t, brand }, interaction) {
      // The token and the mail that carries it commit together: no link without its mail.
      await deps.mailer.sendWith(async (trx) => {
        const { token } = await deps.accountTokens.issue({
          purpose: 'email_verification',
          userId: user.id,
          email: user.email,
          ttlSeconds: ttl,
          trx,
        });
        const link = withInteraction(new URL('/signup/verify', deps.issuer), interaction);
        link.searchParams.set('token', token);
        const vars = { product: brand.productName, link: link.href, hours, ...plain };
        return {
          to: user.email,
          subject: t('signup:verifyMailSubject', vars),
          text: t('signup:verifyMailText', vars),
        };
      });
    },
    async sendTaken(user, { t, brand }, interaction) {
      const signIn =
        interaction && INTERACTION_UID.test(interaction)
          ? new URL(`/interaction/${interaction}`, deps.issuer)
          : new URL('/account', deps.issuer);
      const vars = { product: brand.productName, signIn: signIn.href, ...plain };
      await deps.mailer.send({
        to: user.email,
        subject: t('signup:takenMailSubject', vars),
        text: t('signup:takenMailText', vars),
      });
    },
    peek: (token) => deps.accountTokens.peek('email_verification', token),
    consume: (token) => deps.accountTokens.consume('email_verification', token),
    async resend(userId, ui) {
      const user = await deps.accounts.get(userId);
      if (!user) return 'not_found';
      if (user.emailVerifiedAt) return 'verified';
      await mail.sendLink(user, ui);
      return 'sent';
    },
  };
  return mail;
}
