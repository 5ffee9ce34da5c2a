import type { Db, DbTransaction } from '@portcullis/db';

/** A mail as the outbox stores it (identity/mail/outbox.ts delivers it). */
export interface OutboxMail {
  recipient: string;
  subject: string;
  text: string;
  html: string | null;
}

/** A row claimed for delivery: a mail, or a request (`kind`, `payload`) to compose first. */
export interface OutboxRow extends OutboxMail {
  id: string | number;
  attempts: number;
  uncertain: number;
  kind: string | null;
  payload: string | null;
}

/**
 * The `mail_outbox` table. `worker` names the instance that claimed a row: a write that says
 * it applies only while that worker still holds the row (a stop may have handed it back).
 */
export interface MailOutboxRepo {
  /** Queues a mail, in `trx` when given (it is sent only if that transaction commits). */
  add(mail: OutboxMail, trx?: DbTransaction): Promise<void>;
  /** Queues a request that a composer turns into its mail when it is delivered. */
  addRequest(kind: string, recipient: string, payload: unknown): Promise<void>;
  /** One due row, claimed by one statement: of two instances racing, one gets it. */
  claim(worker: string, leaseMs: number): Promise<OutboxRow | undefined>;
  /**
   * Turns a claimed request into its mail (or deletes it when `write` is absent) in one
   * transaction with what `write` writes; the mail, or undefined when deleted.
   */
  compose(
    row: OutboxRow,
    worker: string,
    write: ((trx: DbTransaction) => Promise<OutboxMail>) | undefined,
  ): Promise<OutboxMail | undefined>;
  /** Another attempt in `delayMs`; the row is released. */
  retryLater(
    row: OutboxRow,
    worker: string,
    change: { delayMs: number; lastError: string },
  ): Promise<void>;
  /** Given up: its body (a one-time link) is not kept. */
  giveUp(row: OutboxRow, worker: string, lastError: string): Promise<void>;
  /** The server took it, whoever holds it now: no one sends it again. */
  markSent(row: OutboxRow): Promise<void>;
  /** Rows `worker` still holds: due at once for another instance (an interrupted mail is uncertain). */
  handBack(worker: string): Promise<void>;
  /** Deletes sent rows older than `days`. */
  purgeSent(days: number): Promise<void>;
  transaction<T>(work: (trx: DbTransaction) => Promise<T>): Promise<T>;
}

export function createMailOutboxRepo(db: Db): MailOutboxRepo {
  const held = (q: Db | DbTransaction, row: OutboxRow, worker: string) =>
    q('mail_outbox').where({ id: row.id, claimed_by: worker });

  return {
    async add(mail, trx) {
      await (trx ?? db)('mail_outbox').insert(mail);
    },

    async addRequest(kind, recipient, payload) {
      await db('mail_outbox').insert({
        recipient,
        subject: '',
        text: '',
        kind,
        payload: JSON.stringify(payload),
      });
    },

    async claim(worker, leaseMs) {
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
        [leaseMs, worker],
      );
      return (result as { rows: OutboxRow[] }).rows[0];
    },

    compose(row, worker, write) {
      return db.transaction(async (trx) => {
        if (!write) {
          await held(trx, row, worker).delete();
          return undefined;
        }
        const mail = await write(trx);
        const updated = await held(trx, row, worker).update({ ...mail, kind: null, payload: null });
        if (updated !== 1) throw new Error('mail request handed back during its composition');
        return mail;
      });
    },

    async retryLater(row, worker, { delayMs, lastError }) {
      await held(db, row, worker).update({
        next_attempt_at: db.raw(`now() + (? * interval '1 millisecond')`, [delayMs]),
        last_error: lastError,
        uncertain: row.uncertain,
        claimed_by: null,
      });
    },

    async giveUp(row, worker, lastError) {
      await held(db, row, worker).update({
        failed_at: db.fn.now(),
        last_error: lastError,
        uncertain: row.uncertain,
        text: '',
        html: null,
        payload: null,
        claimed_by: null,
      });
    },

    async markSent(row) {
      await db('mail_outbox')
        .where({ id: row.id })
        .whereNull('sent_at')
        .update({ sent_at: db.fn.now(), last_error: null, text: '', html: null, claimed_by: null });
    },

    async handBack(worker) {
      await db('mail_outbox')
        .where({ claimed_by: worker })
        .whereNull('sent_at')
        .whereNull('failed_at')
        .update({
          next_attempt_at: db.fn.now(),
          claimed_by: null,
          uncertain: db.raw('uncertain + CASE WHEN kind IS NULL THEN 1 ELSE 0 END'),
        });
    },

    async purgeSent(days) {
      await db('mail_outbox')
        .whereNotNull('sent_at')
        .where('sent_at', '<', db.raw(`now() - (? * interval '1 day')`, [days]))
        .delete();
    },

    transaction: (work) => db.transaction(work),
  };
}
