import { randomBytes } from 'node:crypto';
import type { DbTransaction } from '@portcullis/db';
import type { Logger } from 'pino';
import type { MailOutboxRepo, OutboxRow } from '../../data/mail-outbox-repo.js';
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

const SENT_KEPT_DAYS = 7;
const PURGE_EVERY_MS = 60 * 60_000;

/** A timeout while waiting for the server's answer: it may have taken the mail (docs/mail.md). */
const mayHaveDelivered = (error: unknown): boolean =>
  (error as { code?: unknown }).code === 'ETIMEDOUT' &&
  (error as { timeoutType?: unknown }).timeoutType === 'SOCKET_TIMEOUT';

export function createMailOutbox(
  rows: MailOutboxRepo,
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
  /** This worker's name on the rows it claims: a stop hands back its own rows only. */
  const me = randomBytes(12).toString('base64url');
  const composers = new Map<string, Composer>();

  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  let lastPurge = 0;

  async function giveUp(row: OutboxRow, lastError: string): Promise<void> {
    await rows.giveUp(row, me, lastError);
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
    const mail = await rows.compose(
      row,
      me,
      write &&
        (async (trx) => {
          const message = await write(trx);
          return {
            recipient: message.to,
            subject: message.subject,
            text: message.text,
            html: message.html ?? null,
          };
        }),
    );
    return mail && { ...row, ...mail, kind: null, payload: null };
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
        await giveUp(row, lastError);
        return false;
      }
      const delay = Math.min(retryBaseMs * 2 ** (row.attempts - 1), retryMaxMs);
      await rows.retryLater(row, me, { delayMs: delay, lastError });
      logger.warn(
        { mail: row.id, attempts: row.attempts, uncertain: row.uncertain, error: lastError },
        uncertain ? 'mail may have been sent, retrying' : 'mail not sent, retrying',
      );
      schedule(delay);
      return false;
    }
    await rows.markSent(row);
    return true;
  }

  async function deliverDue(): Promise<number> {
    let sent = 0;
    const claim = () => rows.claim(me, leaseMs);
    for (let row = await claim(); row && !closed; row = await claim()) {
      if (await deliver(row)) sent++;
    }
    if (Date.now() - lastPurge > PURGE_EVERY_MS) {
      lastPurge = Date.now();
      await rows.purgeSent(SENT_KEPT_DAYS);
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
    const mail = {
      recipient: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html ?? null,
    };
    await rows.add(mail, options.trx);
    kickAfter(options.trx);
  }

  let poll: NodeJS.Timeout | undefined;

  return {
    send,
    async sendWith(write) {
      await rows.transaction(async (trx) => {
        const message = await write(trx);
        if (message) await send(message, { trx });
      });
    },
    async request(kind, recipient, payload) {
      await rows.addRequest(kind, recipient, payload);
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
      await rows.handBack(me);
    },
  };
}
