import { randomBytes } from 'node:crypto';
import type { Db, DbTransaction } from '@portcullis/db';
import type { Logger } from 'pino';
import type { Composer, Mailer, MailMessage, MailTransport, SendOptions } from './mailer.js';

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
  /** Resends after attempts that may have delivered the mail (docs/mail.md "Resends"); default 1. */
  uncertainResends?: number | undefined;
  /** How long a stop waits for a send in progress before it hands its row back; default 5 s. */
  closeWaitMs?: number | undefined;
}

/** `send` queues; the worker delivers (one per instance, started by server.ts). */
export interface MailOutbox extends Mailer {
  start(): void;
  /** Delivers every due row now; resolves when none is left. How many it sent. */
  deliverDue(): Promise<number>;
  /** Stops the worker; a row it still holds after `closeWaitMs` is due at once for another instance. */
  close(): Promise<void>;
}

interface OutboxRow {
  id: string | number;
  recipient: string;
  subject: string;
  text: string;
  html: string | null;
  attempts: number;
  uncertain: number;
  kind: string | null;
  payload: string | null;
}

const SENT_KEPT_DAYS = 7;
const PURGE_EVERY_MS = 60 * 60_000;

/** A timeout while waiting for the server's answer: it may have taken the mail (docs/mail.md). */
const mayHaveDelivered = (error: unknown): boolean =>
  (error as { code?: unknown }).code === 'ETIMEDOUT' &&
  (error as { timeoutType?: unknown }).timeoutType === 'SOCKET_TIMEOUT';

export function createMailOutbox(
  db: Db,
  transport: MailTransport,
  logger: Logger,
  settings: OutboxSettings = {},
): MailOutbox {
  const retryBaseMs = settings.retryBaseMs ?? 30_000;
  const retryMaxMs = settings.retryMaxMs ?? 3_600_000;
  const maxAttempts = settings.maxAttempts ?? 10;
  const pollMs = settings.pollMs ?? 10_000;
  const leaseMs = settings.leaseMs ?? 5 * 60_000;
  const uncertainResends = settings.uncertainResends ?? 1;
  const closeWaitMs = settings.closeWaitMs ?? 5000;
  const later = (ms: number) => db.raw(`now() + (? * interval '1 millisecond')`, [ms]);
  /** This worker's name on the rows it claims: a stop hands back its own rows only. */
  const me = randomBytes(12).toString('base64url');
  const composers = new Map<string, Composer>();

  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  let lastPurge = 0;

  /** One due row, claimed by one statement: of two instances racing, one gets it. */
  async function claim(): Promise<OutboxRow | undefined> {
    // The outer conditions are rechecked on the locked row (READ COMMITTED), so a row another
    // instance claimed meanwhile (its next_attempt_at moved ahead) is not claimed twice. A row
    // still claimed is one whose sender died mid-attempt: uncertain once it was a mail.
    const result = await db.raw(
      `UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at = now() + (? * interval '1 millisecond'),
              uncertain = uncertain + CASE WHEN claimed_by IS NOT NULL AND kind IS NULL THEN 1 ELSE 0 END,
              claimed_by = ?
        WHERE id = (SELECT id FROM mail_outbox
                     WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
                     ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
          AND sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
        RETURNING id, recipient, subject, text, html, attempts, uncertain, kind, payload`,
      [leaseMs, me],
    );
    return (result as { rows: OutboxRow[] }).rows[0];
  }

  /** The row's own writes apply only while this worker still holds it (a stop may have handed it back). */
  const mine = (row: OutboxRow) => db('mail_outbox').where({ id: row.id, claimed_by: me });

  async function giveUp(row: OutboxRow, lastError: string): Promise<void> {
    // The body (its one-time link) is not kept once the mail is given up.
    await mine(row).update({
      failed_at: db.fn.now(),
      last_error: lastError,
      text: '',
      html: null,
      payload: null,
      claimed_by: null,
    });
    logger.error(
      { mail: row.id, attempts: row.attempts, uncertain: row.uncertain, error: lastError },
      'mail given up',
    );
  }

  /** A request becomes its mail, with whatever the composer writes, in one transaction; or goes. */
  async function compose(row: OutboxRow): Promise<OutboxRow | undefined> {
    const composer = composers.get(row.kind!);
    if (!composer) throw new Error(`no composer for mail requests of kind ${row.kind}`);
    const payload = JSON.parse(row.payload ?? '{}') as Record<string, unknown>;
    const write = await composer(payload);
    return db.transaction(async (trx) => {
      const held = trx('mail_outbox').where({ id: row.id, claimed_by: me });
      if (!write) {
        await held.delete();
        return undefined;
      }
      const message = await write(trx);
      const mail = {
        recipient: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html ?? null,
      };
      const updated = await held.update({ ...mail, kind: null, payload: null });
      if (updated !== 1) throw new Error('mail request handed back during its composition');
      return { ...row, ...mail, kind: null, payload: null };
    });
  }

  async function deliver(claimed: OutboxRow): Promise<boolean> {
    let row = claimed;
    if (row.uncertain > uncertainResends) {
      await giveUp(row, `not resent: ${row.uncertain} earlier attempts may have delivered it`);
      return false;
    }
    try {
      if (row.kind) {
        const composed = await compose(row);
        if (!composed) return false;
        row = composed;
      }
      await transport.send({
        to: row.recipient,
        subject: row.subject,
        text: row.text,
        html: row.html ?? undefined,
      });
    } catch (error) {
      const message = String((error as Error).message ?? error).slice(0, 900);
      const uncertain = mayHaveDelivered(error);
      const lastError = uncertain ? `${message} (the mail may have been delivered)` : message;
      if (uncertain) row = { ...row, uncertain: row.uncertain + 1 };
      if (row.attempts >= maxAttempts || row.uncertain > uncertainResends) {
        await mine(row).update({ uncertain: row.uncertain });
        await giveUp(row, lastError);
        return false;
      }
      const delay = Math.min(retryBaseMs * 2 ** (row.attempts - 1), retryMaxMs);
      await mine(row).update({
        next_attempt_at: later(delay),
        last_error: lastError,
        uncertain: row.uncertain,
        claimed_by: null,
      });
      logger.warn(
        { mail: row.id, attempts: row.attempts, uncertain: row.uncertain, error: lastError },
        uncertain ? 'mail may have been sent, retrying' : 'mail not sent, retrying',
      );
      schedule(delay);
      return false;
    }
    // Whoever holds it now: the server took it, so no one sends it again.
    await db('mail_outbox')
      .where({ id: row.id })
      .whereNull('sent_at')
      .update({ sent_at: db.fn.now(), last_error: null, text: '', html: null, claimed_by: null });
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

  /** Kicks once `trx` commits (its rows are not visible before), at once without one. */
  function kickAfter(trx: DbTransaction | undefined): void {
    // Normally out within a second; the poll catches what a kick misses.
    if (trx) void trx.executionPromise.then(kick, () => undefined);
    else kick();
  }

  async function send(message: MailMessage, options: SendOptions = {}): Promise<void> {
    const trx = options.trx;
    await (trx ?? db)('mail_outbox').insert({
      recipient: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html ?? null,
    });
    kickAfter(trx);
  }

  let poll: NodeJS.Timeout | undefined;

  return {
    send,
    async sendWith(write) {
      await db.transaction(async (trx) => {
        const message = await write(trx);
        if (message) await send(message, { trx });
      });
    },
    async request(kind, recipient, payload) {
      await db('mail_outbox').insert({
        recipient,
        subject: '',
        text: '',
        kind,
        payload: JSON.stringify(payload),
      });
      kick();
    },
    composer(kind, compose) {
      composers.set(kind, compose);
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
      let waited: NodeJS.Timeout | undefined;
      const waitOver = new Promise<void>((resolve) => (waited = setTimeout(resolve, closeWaitMs)));
      while (running) {
        if ((await Promise.race([running.then(() => 'done'), waitOver])) !== 'done') break;
      }
      clearTimeout(waited);
      // What this instance still holds: due at once for another (an interrupted send counts as uncertain).
      await db('mail_outbox')
        .where({ claimed_by: me })
        .whereNull('sent_at')
        .whereNull('failed_at')
        .update({
          next_attempt_at: db.fn.now(),
          claimed_by: null,
          uncertain: db.raw('uncertain + CASE WHEN kind IS NULL THEN 1 ELSE 0 END'),
        });
    },
  };
}
