import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { DbTransaction } from '@portcullis/db';
import type { Logger } from 'pino';

/** One mail to one person; `text` is required (every mail reads without HTML). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
}

/** Where a queued mail is written: the caller's transaction, so it commits with its token. */
export interface SendOptions {
  trx?: DbTransaction | undefined;
}

/** What a composer gives back: the mail to queue, or undefined to queue none. */
export type Composed = MailMessage | undefined;

/** Queues mail for delivery (README "E-mail", docs/mail.md): the outbox. */
export interface Mailer {
  send(message: MailMessage, options?: SendOptions): Promise<void>;
  /**
   * Runs `write` in one transaction and queues the mail it returns in that same transaction:
   * a link's token and the mail that carries it commit together or not at all.
   */
  sendWith(write: (trx: DbTransaction) => Promise<Composed>): Promise<void>;
  /**
   * Queues a request whose mail the worker composes later with `kind`'s composer: one write,
   * the same whatever the composer will decide (docs/mail.md "Requests").
   */
  request(kind: string, recipient: string, payload: Record<string, unknown>): Promise<void>;
  /**
   * How the worker turns a request of `kind` into a mail: `compose` reads (outside any
   * transaction: PGlite has one connection) and returns the writer of the mail, run in one
   * transaction with queueing it; or undefined, and the request is dropped.
   */
  composer(kind: string, compose: Composer): void;
}

export type Composer = (
  payload: Record<string, unknown>,
) => Promise<((trx: DbTransaction) => Promise<MailMessage>) | undefined>;

/** Hands one message to the SMTP server (or the development mailbox), once per call. */
export interface MailTransport {
  send(message: MailMessage): Promise<void>;
}

export interface MailerSettings {
  /** smtp:// or smtps://; unset: the development mailbox (the log and DATA_DIR/mail). */
  smtpUrl: string | undefined;
  from: string;
  dataDir: string;
  logger: Logger;
  /** The development mailbox logs each mail's text (its links); off in production. Default true. */
  logText?: boolean | undefined;
  /** SMTP timeouts in ms (docs/mail.md "Timeouts"); tests shorten them. */
  timeouts?: Partial<SmtpTimeouts> | undefined;
}

export interface SmtpTimeouts {
  connectionMs: number;
  greetingMs: number;
  /** The longest silence of the server within one SMTP exchange. */
  socketMs: number;
}

export const SMTP_TIMEOUTS: SmtpTimeouts = {
  connectionMs: 30_000,
  greetingMs: 30_000,
  socketMs: 60_000,
};

/** Delivers at once over SMTP, or writes to the development mailbox: the outbox's transport (outbox.ts). */
export function createMailer(settings: MailerSettings): MailTransport {
  const { smtpUrl, from, logger } = settings;
  if (smtpUrl) {
    const timeouts = { ...SMTP_TIMEOUTS, ...settings.timeouts };
    // Bounded, so a silent server cannot hold the outbox's worker (its lease is 5 min).
    const transport = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: timeouts.connectionMs,
      greetingTimeout: timeouts.greetingMs,
      socketTimeout: timeouts.socketMs,
    });
    return {
      async send(message) {
        await transport.sendMail({ from, ...message });
      },
    };
  }
  const folder = path.join(settings.dataDir, 'mail');
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  let sequence = 0;
  return {
    async send(message) {
      const info = await transport.sendMail({ from, ...message });
      await mkdir(folder, { recursive: true });
      const file = path.join(folder, `${Date.now()}-${++sequence}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      // Development only: the text carries one-time links, which a production log must not.
      const text = settings.logText === false ? {} : { text: message.text };
      logger.info({ to: message.to, subject: message.subject, file, ...text }, 'mail');
    },
  };
}
