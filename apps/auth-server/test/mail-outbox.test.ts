import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { startTestAuthServer } from '@portcullis/testing/auth-server';
import { startMailbox, until, type Mailbox } from '@portcullis/testing';
import { createMailer, type SmtpTimeouts } from '../src/identity/mail/mailer.js';
import { createMailOutboxRepo } from '../src/data/mail-outbox-repo.js';
import {
  createMailOutbox,
  type MailOutbox,
  type OutboxSettings,
} from '../src/identity/mail/outbox.js';

// The outbox on a real database (PGlite, or PostgreSQL with DATABASE_URL) and a real SMTP server.

let mailbox: Mailbox;
let database: TestDatabase;
let dataDir: string;
const outboxes: MailOutbox[] = [];
const lines: Record<string, unknown>[] = [];
const logger = pino(
  { level: 'info' },
  { write: (line: string) => void lines.push(JSON.parse(line)) },
);

beforeAll(async () => {
  mailbox = await startMailbox();
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-outbox-'));
});
afterEach(async () => {
  await Promise.all(outboxes.splice(0).map((o) => o.close()));
  mailbox.refuse(false);
  mailbox.delay(0);
});
afterAll(async () => {
  await database?.close();
  await mailbox?.close();
  await rm(dataDir, { recursive: true, force: true });
});

function outbox(settings: OutboxSettings = {}, timeouts?: Partial<SmtpTimeouts>): MailOutbox {
  const transport = createMailer({
    smtpUrl: mailbox.url,
    from: 'a@example.com',
    dataDir,
    logger,
    timeouts,
  });
  const o = createMailOutbox(createMailOutboxRepo(database.db), transport, logger, {
    retryBaseMs: 50,
    ...settings,
  });
  outboxes.push(o);
  return o;
}

const row = (recipient: string) => database.db('mail_outbox').where({ recipient }).first();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mail outbox', () => {
  it('queues a mail and its worker delivers it, keeping no body once sent', async () => {
    const o = outbox();
    o.start();
    await o.send({ to: 'first@example.com', subject: 'Hi', text: 'https://x.test/?token=abc' });
    const mail = await mailbox.next('first@example.com');
    expect(mail.links).toEqual(['https://x.test/?token=abc']);
    const sent = await until(
      () => row('first@example.com'),
      (r) => r?.sent_at != null,
      5000,
    );
    expect(sent).toMatchObject({ attempts: 1, text: '', last_error: null });
  });

  it('retries with backoff while the SMTP server refuses, and delivers once it accepts', async () => {
    mailbox.refuse(true);
    const o = outbox();
    o.start();
    await o.send({ to: 'retry@example.com', subject: 'Retry', text: 'body' });
    const failing = await until(
      () => row('retry@example.com'),
      (r) => r?.attempts >= 2,
      10_000,
    );
    expect(failing.last_error).toMatch(/451/);
    expect(failing.sent_at).toBeNull();
    expect(mailbox.to('retry@example.com')).toEqual([]);
    mailbox.refuse(false);
    expect((await mailbox.next('retry@example.com')).subject).toBe('Retry');
    const sent = await until(
      () => row('retry@example.com'),
      (r) => r?.sent_at != null,
      5000,
    );
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    expect(mailbox.to('retry@example.com')).toHaveLength(1);
  });

  it('gives a mail up after the last attempt and logs it as an error', async () => {
    mailbox.refuse(true);
    const o = outbox({ maxAttempts: 2 });
    o.start();
    await o.send({ to: 'never@example.com', subject: 'Never', text: 'secret link' });
    const failed = await until(
      () => row('never@example.com'),
      (r) => r?.failed_at != null,
      10_000,
    );
    expect(failed).toMatchObject({ attempts: 2, text: '' });
    const error = lines.find((l) => l['msg'] === 'mail given up' && l['mail'] == failed.id);
    expect(error).toMatchObject({ level: 50 });
    expect(JSON.stringify(lines)).not.toContain('secret link');
  });

  it('two instances on one database send each mail once', async () => {
    const a = outbox();
    const b = outbox();
    const recipients = Array.from({ length: 12 }, (_, i) => `twice-${i}@example.com`);
    await database
      .db('mail_outbox')
      .insert(recipients.map((to) => ({ recipient: to, subject: `To ${to}`, text: 'once' })));
    const [sentA, sentB] = await Promise.all([a.deliverDue(), b.deliverDue()]);
    expect(sentA + sentB).toBe(recipients.length);
    for (const to of recipients) expect(mailbox.to(to)).toHaveLength(1);
  });

  it('a stop during a slow SMTP send hands the row back, due at once for another instance', async () => {
    // The server holds its answer 4 s; the stopping instance waits 200 ms for it, not its lease.
    mailbox.delay(4000);
    const a = outbox({ closeWaitMs: 200 });
    await a.send({ to: 'stopped@example.com', subject: 'Stopped', text: 'link' });
    await until(
      async () => mailbox.to('stopped@example.com').length,
      (n) => n === 1,
      5000,
    );
    await Promise.race([a.close(), sleep(2000)]);
    const released = await database
      .db('mail_outbox')
      .where({ recipient: 'stopped@example.com' })
      .select(database.db.raw('next_attempt_at <= now() as due'), 'sent_at', 'uncertain')
      .first();
    expect(released).toMatchObject({ due: true, sent_at: null, uncertain: 1 });
    mailbox.delay(0);
    const b = outbox();
    expect(await b.deliverDue()).toBe(1);
    // Twice at most: the first copy was handed over before the stop (docs/mail.md "Resends").
    expect(mailbox.to('stopped@example.com')).toHaveLength(2);
  });

  it('an SMTP server that acknowledges after the timeout gets the mail at most twice', async () => {
    mailbox.delay(400);
    const o = outbox({}, { socketMs: 150 });
    o.start();
    await o.send({ to: 'late@example.com', subject: 'Late', text: 'a link' });
    const given = await until(
      () => row('late@example.com'),
      (r) => r?.failed_at != null,
      10_000,
    );
    expect(given).toMatchObject({ attempts: 2, uncertain: 2, text: '' });
    expect(given.last_error).toMatch(/may have been delivered/);
    // Further attempts would have come by now (50 ms backoff).
    await sleep(1000);
    expect(mailbox.to('late@example.com')).toHaveLength(2);
    const error = lines.find((l) => l['msg'] === 'mail given up' && l['mail'] == given.id);
    expect(error).toMatchObject({ level: 50, uncertain: 2 });
  });

  it('a row whose lease lapsed (its sender died mid-send) is resent once, then given up', async () => {
    const [{ id }] = await database
      .db('mail_outbox')
      .insert({
        recipient: 'lapsed@example.com',
        subject: 'Lapsed',
        text: 'x',
        attempts: 1,
        claimed_by: 'a dead instance',
      })
      .returning('id');
    const o = outbox();
    expect(await o.deliverDue()).toBe(1);
    expect(mailbox.to('lapsed@example.com')).toHaveLength(1);
    await database.db('mail_outbox').where({ id }).update({
      sent_at: null,
      claimed_by: 'another dead instance',
      next_attempt_at: database.db.fn.now(),
    });
    expect(await o.deliverDue()).toBe(0);
    expect(await row('lapsed@example.com')).toMatchObject({ uncertain: 2 });
    expect((await row('lapsed@example.com')).failed_at).not.toBeNull();
    expect(mailbox.to('lapsed@example.com')).toHaveLength(1);
  });

  it('the development mailbox in production logs no mail text (its links)', async () => {
    const logged: string[] = [];
    const mailer = createMailer({
      smtpUrl: undefined,
      from: 'a@example.com',
      dataDir,
      logger: pino({ level: 'info' }, { write: (l: string) => void logged.push(l) }),
      logText: false,
    });
    await mailer.send({ to: 'prod@example.com', subject: 'Link', text: 'https://x.test/?token=t' });
    expect(JSON.parse(logged[0]!)).toMatchObject({ to: 'prod@example.com', subject: 'Link' });
    expect(logged.join('')).not.toContain('token=t');
  });

  it('in production without SMTP_URL: a warning at start, and no one-time link in the log', async () => {
    const secret = () => randomBytes(32).toString('base64url');
    const t = await startTestAuthServer({
      NODE_ENV: 'production',
      ISSUER: 'https://auth.example.test',
      ADMIN_TOKEN: secret(),
      COOKIE_KEYS: `${secret()},${secret()}`,
      KEY_ENCRYPTION_KEY: secret(),
    });
    try {
      const warning = t.logs.find((l) => String(l['msg']).includes('SMTP_URL is not set'));
      expect(warning).toMatchObject({ level: 40 });
      const user = await t.admin('POST', '/admin/users', {
        email: 'prod-user@example.com',
        password: 'long-password-1',
        roles: [],
      });
      expect((await t.admin('POST', `/admin/users/${user.body.id}/password-reset`)).status).toBe(
        200,
      );
      const logged = await until(
        async () => t.logs.find((l) => l['msg'] === 'mail'),
        (l) => l !== undefined,
        5000,
      );
      expect(logged).toMatchObject({ to: 'prod-user@example.com' });
      expect(JSON.stringify(t.logs)).not.toContain('token=');
      const dir = path.dirname(String(logged!['file']));
      expect(await readdir(dir)).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});
