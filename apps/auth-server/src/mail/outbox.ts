import type { Db } from '@portcullis/db';
import type { Logger } from 'pino';
import type { Mailer, MailMessage, SendOptions } from './mailer.js';

/** How the outbox retries (docs/mail.md "Retries"). */
export interface OutboxSettings {
  /** First retry after this many ms, doubling each time; default 30 s. */
  retryBaseMs?: number | undefined;
  /** Longest wait between two attempts; default 1 h. */
  retryMaxMs?: number | undefined;
  /** Attempts before a mail is given up (failed_at); default 10 (about 5 h of trying). */
  maxAttempts?: number | undefined;
  /** How often the worker looks for due rows it was not kicked for (retries, other instances); default 10 s. */
  pollMs?: number | undefined;
  /** A claimed row is claimable again after this long (a process that died mid-send); default 5 min. */
  leaseMs?: number | undefined;
}

/** `send` queues; the worker delivers (one per instance, started by server.ts). */
export interface MailOutbox extends Mailer {
  start(): void;
  /** Delivers every due row now; resolves when none is left. How many it sent. */
  deliverDue(): Promise<number>;
  /** Stops the worker and waits for a delivery in progress. */
  close(): Promise<void>;
}

interface OutboxRow {
  id: string | number;
  recipient: string;
  subject: string;
  text: string;
  html: string | null;
  attempts: number;
}

const SENT_KEPT_DAYS = 7;
const PURGE_EVERY_MS = 60 * 60_000;

export function createMailOutbox(
  db: Db,
  transport: Mailer,
  logger: Logger,
  settings: OutboxSettings = {},
): MailOutbox {
  const retryBaseMs = settings.retryBaseMs ?? 30_000;
  const retryMaxMs = settings.retryMaxMs ?? 3_600_000;
  const maxAttempts = settings.maxAttempts ?? 10;
  const pollMs = settings.pollMs ?? 10_000;
  const leaseMs = settings.leaseMs ?? 5 * 60_000;
  const later = (ms: number) => db.raw(`now() + (? * interval '1 millisecond')`, [ms]);

  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  let lastPurge = 0;

  /** One due row, claimed by one statement: of two instances racing, one gets it. */
  async function claim(): Promise<OutboxRow | undefined> {
    // The outer conditions are rechecked on the locked row (READ COMMITTED), so a row another
    // instance claimed meanwhile (its next_attempt_at moved ahead) is not claimed twice.
    const result = await db.raw(
      `UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at = now() + (? * interval '1 millisecond')
        WHERE id = (SELECT id FROM mail_outbox
                     WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
                     ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
          AND sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
        RETURNING id, recipient, subject, text, html, attempts`,
      [leaseMs],
    );
    return (result as { rows: OutboxRow[] }).rows[0];
  }

  async function deliver(row: OutboxRow): Promise<boolean> {
    try {
      await transport.send({
        to: row.recipient,
        subject: row.subject,
        text: row.text,
        html: row.html ?? undefined,
      });
    } catch (error) {
      const lastError = String((error as Error).message ?? error).slice(0, 1000);
      if (row.attempts >= maxAttempts) {
        // The body (its one-time link) is not kept once the mail is given up.
        await db('mail_outbox')
          .where({ id: row.id })
          .update({ failed_at: db.fn.now(), last_error: lastError, text: '', html: null });
        logger.error({ mail: row.id, attempts: row.attempts, error: lastError }, 'mail given up');
        return false;
      }
      const delay = Math.min(retryBaseMs * 2 ** (row.attempts - 1), retryMaxMs);
      await db('mail_outbox')
        .where({ id: row.id })
        .update({ next_attempt_at: later(delay), last_error: lastError });
      logger.warn(
        { mail: row.id, attempts: row.attempts, error: lastError },
        'mail not sent, retrying',
      );
      schedule(delay);
      return false;
    }
    await db('mail_outbox')
      .where({ id: row.id })
      .update({ sent_at: db.fn.now(), last_error: null, text: '', html: null });
    return true;
  }

  async function deliverDue(): Promise<number> {
    let sent = 0;
    for (let row = await claim(); row && !closed; row = await claim()) {
      if (await deliver(row)) sent++;
    }
    if (Date.now() - lastPurge > PURGE_EVERY_MS) {
      lastPurge = Date.now();
      await db('mail_outbox')
        .whereNotNull('sent_at')
        .where('sent_at', '<', db.raw(`now() - interval '${SENT_KEPT_DAYS} days'`))
        .delete();
    }
    return sent;
  }

  function kick(): void {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await deliverDue();
      } while (again && !closed);
    })()
      .catch((error: unknown) => logger.error({ err: error }, 'mail outbox'))
      .finally(() => {
        running = undefined;
      });
  }

  function schedule(ms: number): void {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      kick();
    }, ms);
    timer.unref();
    timers.add(timer);
  }

  let poll: NodeJS.Timeout | undefined;

  return {
    async send(message: MailMessage, options: SendOptions = {}) {
      const trx = options.trx;
      await (trx ?? db)('mail_outbox').insert({
        recipient: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html ?? null,
      });
      // Normally out within a second; the poll catches what a kick misses.
      if (trx) void trx.executionPromise.then(kick, () => undefined);
      else kick();
    },
    start() {
      if (poll || closed) return;
      poll = setInterval(kick, pollMs);
      poll.unref();
      kick();
    },
    async deliverDue() {
      while (running) await running;
      return deliverDue();
    },
    async close() {
      closed = true;
      if (poll) clearInterval(poll);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      while (running) await running;
    },
  };
}
