import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

/** One mail to one person; `text` is required (every mail reads without HTML). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
}

/** Hands a message over for delivery (README "E-mail"). */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export interface MailerSettings {
  /** smtp:// or smtps://; unset: the development mailbox (the log and DATA_DIR/mail). */
  smtpUrl: string | undefined;
  from: string;
  dataDir: string;
  logger: Logger;
}

/** Delivers at once over SMTP, or writes to the development mailbox. */
export function createMailer(settings: MailerSettings): Mailer {
  const { smtpUrl, from, logger } = settings;
  if (smtpUrl) {
    const transport = nodemailer.createTransport(smtpUrl);
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
      logger.info({ to: message.to, subject: message.subject, file, text: message.text }, 'mail');
    },
  };
}
