import type { AccountTokens, User } from '@portcullis/accounts';
import type { DbTransaction } from '@portcullis/db';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import type { Ui } from '../ui/index.js';

export interface PasswordMailDeps {
  accountTokens: AccountTokens;
  mailer: Mailer;
  /** PASSWORD_RESET_TTL, seconds. */
  ttlSeconds: number;
}

/** Mail text is not HTML: values go in as they are. */
const plain = { interpolation: { escapeValue: false } };

/** An interaction uid as oidc-provider makes them; anything else is dropped. */
export const interactionUid = (value: unknown): string | undefined =>
  typeof value === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(value) ? value : undefined;

/** Issues a reset token (earlier ones stop working) and queues the mail with its link, in one transaction. */
export async function mailResetLink(deps: PasswordMailDeps, input: ResetMailInput): Promise<void> {
  await deps.mailer.sendWith((trx) => resetLinkMail(deps, input, trx));
}

export interface ResetMailInput {
  issuer: string;
  user: User;
  ui: Ui;
  forced?: boolean;
  interaction?: string | undefined;
}

/** The reset mail for `input.user`, its token issued in `trx`: it commits with the queued mail. */
export async function resetLinkMail(
  deps: Pick<PasswordMailDeps, 'accountTokens' | 'ttlSeconds'>,
  input: ResetMailInput,
  trx: DbTransaction,
): Promise<MailMessage> {
  const { ui, user } = input;
  const { token } = await deps.accountTokens.issue({
    purpose: 'password_reset',
    userId: user.id,
    ttlSeconds: deps.ttlSeconds,
    trx,
  });
  const link = new URL('/password/reset', input.issuer);
  link.searchParams.set('token', token);
  if (input.interaction) link.searchParams.set('interaction', input.interaction);
  const vars = {
    ...plain,
    product: ui.brand.productName,
    minutes: Math.floor(deps.ttlSeconds / 60),
    link: link.href,
  };
  return {
    to: user.email,
    subject: ui.t('password:resetMailSubject', vars),
    text: ui.t(input.forced ? 'password:forcedMail' : 'password:resetMail', vars),
  };
}

/** "Your password was changed", with a link to reset it if it was not them. */
export async function mailPasswordChanged(
  mailer: Mailer,
  input: { issuer: string; user: User; ui: Ui },
): Promise<void> {
  const vars = {
    ...plain,
    product: input.ui.brand.productName,
    link: new URL('/password/forgot', input.issuer).href,
  };
  await mailer.send({
    to: input.user.email,
    subject: input.ui.t('password:changedMailSubject', vars),
    text: input.ui.t('password:changedMail', vars),
  });
}
