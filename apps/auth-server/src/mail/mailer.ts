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

/** Hands a message over for delivery (README "E-mail"). */
export interface Mailer {
  send(message: MailMessage, options?: SendOptions): Promise<void>;
}

export interface MailerSettings {
  /** smtp:// or smtps://; unset: the development mailbox (the log and DATA_DIR/mail). */
  smtpUrl: string | undefined;
  from: string;
  dataDir: string;
  logger: Logger;
  /** The development mailbox logs each mail's text (its links); off in production. Default true. */
  logText?: boolean | undefined;
}

/** Delivers at once over SMTP, or writes to the development mailbox: the outbox's transport (outbox.ts). */
export function createMailer(settings: MailerSettings): Mailer {
  const { smtpUrl, from, logger } = settings;
  if (smtpUrl) {
    // Bounded, so a silent server cannot hold the outbox's worker (its lease is 5 min).
    const transport = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
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
