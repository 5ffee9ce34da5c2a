import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './net.js';
import { until } from './poll.js';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string | undefined;
  /** Every http(s) link in the text, in order. */
  links: string[];
}

export interface Mailbox {
  /** SMTP_URL for the server under test. */
  url: string;
  messages: ReceivedMail[];
  /** The first mail to `to` not yet taken (waits up to 10 s); it is then taken. */
  next(to: string): Promise<ReceivedMail>;
  /** Mails to `to` received so far, taken or not. */
  to(to: string): ReceivedMail[];
  /** Makes the server refuse (true) or accept (false) every following message. */
  refuse(refusing: boolean): void;
  /** Acknowledges each following message `ms` after receiving it (kept even if the client gave up). */
  delay(ms: number): void;
  close(): Promise<void>;
}

/** A real SMTP server on loopback (smtp-server) that keeps every mail it accepts. */
export async function startMailbox(): Promise<Mailbox> {
  const messages: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  let refusing = false;
  let delayMs = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          if (refusing) {
            callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 451 }));
            return;
          }
          const recipients = [parsed.to ?? []].flat().flatMap((a) => a.value);
          const text = parsed.text ?? '';
          messages.push({
            to: recipients.map((a) => (a.address ?? '').toLowerCase()),
            from: parsed.from?.text ?? '',
            subject: parsed.subject ?? '',
            text,
            html: typeof parsed.html === 'string' ? parsed.html : undefined,
            links: text.match(/https?:\/\/[^\s<>")]+/g) ?? [],
          });
          if (delayMs > 0) setTimeout(callback, delayMs).unref();
          else callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const addressedTo = (to: string) => messages.filter((m) => m.to.includes(to.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: addressedTo,
    async next(to) {
      const untaken = async () => addressedTo(to).find((m) => !taken.has(m));
      const mail = await until(untaken, (m) => m !== undefined, 10_000);
      if (!mail) throw new Error(`no mail to ${to} within 10 s`);
      taken.add(mail);
      return mail;
    },
    refuse(value) {
      refusing = value;
    },
    delay(ms) {
      delayMs = ms;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
