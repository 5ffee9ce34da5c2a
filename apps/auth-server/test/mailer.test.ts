import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { startMailbox, type Mailbox } from '@portcullis/testing';
import { createMailer } from '../src/identity/mail/mailer.js';

let mailbox: Mailbox;
let dataDir: string;
beforeAll(async () => {
  mailbox = await startMailbox();
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-mail-'));
});
afterAll(async () => {
  await mailbox.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('mailer', () => {
  it('delivers over SMTP to a real server', async () => {
    const mailer = createMailer({
      smtpUrl: mailbox.url,
      from: 'Portcullis <no-reply@example.com>',
      dataDir,
      logger: pino({ level: 'silent' }),
    });
    await mailer.send({
      to: 'Reader@Example.com',
      subject: 'Hello',
      text: 'Open https://auth.example.com/reset?token=abc now.',
    });
    const mail = await mailbox.next('reader@example.com');
    expect(mail.subject).toBe('Hello');
    expect(mail.from).toContain('no-reply@example.com');
    expect(mail.links).toEqual(['https://auth.example.com/reset?token=abc']);
  });

  it('without SMTP_URL writes the mail under DATA_DIR/mail and to the log', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const mailer = createMailer({ smtpUrl: undefined, from: 'a@example.com', dataDir, logger });
    await mailer.send({ to: 'dev@example.com', subject: 'Dev', text: 'a link' });
    const files = await readdir(path.join(dataDir, 'mail'));
    expect(files).toHaveLength(1);
    expect(await readFile(path.join(dataDir, 'mail', files[0]!), 'utf8')).toContain('Subject: Dev');
    expect(JSON.parse(lines[0]!)).toMatchObject({ to: 'dev@example.com', subject: 'Dev' });
  });
});
