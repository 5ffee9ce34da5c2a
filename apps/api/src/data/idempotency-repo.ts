import { randomUUID } from 'node:crypto';
import { isDatabaseUnavailable, toJsonb, type Db, type IdempotencyKeyRow } from '@portcullis/db';

/** Idempotency of POST /payments, never read-then-write (docs/api-contracts.md#payments-and-idempotency). */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface IdempotencyClaim {
  subject: string;
  key: string;
  id: string;
  lockedAt: Date;
}

export type ClaimOutcome =
  | { outcome: 'claimed'; claim: IdempotencyClaim }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'reused' }
  | { outcome: 'in_flight' };

export interface ClaimRequest {
  subject: string;
  key: string;
  requestHash: string;
  now: Date;
  ttlMs: number;
  /** An in-flight claim older than this is presumed dead and may be taken over. */
  staleMs: number;
}

export interface IdempotencyRepo {
  /** One transaction: never committed after its request answered 503 (docs/robustness.md). */
  claim(request: ClaimRequest): Promise<ClaimOutcome>;
  release(claim: IdempotencyClaim): Promise<void>;
  /** Stale at once: a retry takes it over with the same operation id. */
  unlock(claim: IdempotencyClaim): Promise<void>;
  /** `unlock`, retried every second while the database does not answer, until `giveUpAt`. */
  letGo(claim: IdempotencyClaim, giveUpAt: Date): Promise<void>;
  storedResponse(subject: string, key: string): Promise<StoredResponse | undefined>;
}

/** Marks `claim` completed with `response` in `trx`; false when the claim was taken over. */
export async function completeClaim(
  trx: Db,
  claim: IdempotencyClaim,
  response: StoredResponse,
): Promise<boolean> {
  const rows = await trx('idempotency_keys')
    .where({
      subject: claim.subject,
      key: claim.key,
      id: claim.id,
      state: 'in_flight',
      locked_at: claim.lockedAt,
    })
    .update({
      state: 'completed',
      response_status: response.status,
      response_headers: toJsonb(response.headers),
      response_body: toJsonb(response.body),
    })
    .returning('id');
  return rows.length > 0;
}

const claimOf = (row: IdempotencyKeyRow): IdempotencyClaim => ({
  subject: row.subject,
  key: row.key,
  id: row.id,
  lockedAt: row.locked_at,
});

const responseOf = (row: IdempotencyKeyRow): StoredResponse => ({
  status: row.response_status ?? 500,
  headers: row.response_headers ?? {},
  body: row.response_body,
});

const LET_GO_RETRY_MS = 1_000;

export function createIdempotencyRepo(db: Db): IdempotencyRepo {
  const table = () => db<IdempotencyKeyRow>('idempotency_keys');

  async function attempt(trx: Db, r: ClaimRequest): Promise<ClaimOutcome | undefined> {
    const keys = () => trx<IdempotencyKeyRow>('idempotency_keys');
    const fresh = {
      id: randomUUID(),
      request_hash: r.requestHash,
      state: 'in_flight' as const,
      response_status: null,
      response_headers: null,
      response_body: null,
      created_at: r.now,
      locked_at: r.now,
      expires_at: new Date(r.now.getTime() + r.ttlMs),
    };
    const [inserted] = await keys()
      .insert({ subject: r.subject, key: r.key, ...fresh })
      .onConflict(['subject', 'key'])
      .ignore()
      .returning('*');
    if (inserted) return { outcome: 'claimed', claim: claimOf(inserted as IdempotencyKeyRow) };

    const row = await keys().where({ subject: r.subject, key: r.key }).first();
    if (!row) return undefined; // released in between: try again
    if (row.expires_at <= r.now) {
      // Kept 24 h: after that the key is new again (a new operation id, a new provider key).
      const [reclaimed] = await keys()
        .where({ subject: r.subject, key: r.key, id: row.id })
        .where('expires_at', '<=', r.now)
        .update(fresh)
        .returning('*');
      return reclaimed
        ? { outcome: 'claimed', claim: claimOf(reclaimed as IdempotencyKeyRow) }
        : undefined;
    }
    if (row.request_hash !== r.requestHash) return { outcome: 'reused' };
    if (row.state === 'completed') return { outcome: 'replay', response: responseOf(row) };
    if (row.locked_at.getTime() > r.now.getTime() - r.staleMs) return { outcome: 'in_flight' };
    // Stale: the same operation id is kept, so the provider call is retried idempotently.
    const [taken] = await keys()
      .where({
        subject: r.subject,
        key: r.key,
        id: row.id,
        state: 'in_flight',
        locked_at: row.locked_at,
      })
      .update({ locked_at: r.now })
      .returning('*');
    return taken
      ? { outcome: 'claimed', claim: claimOf(taken as IdempotencyKeyRow) }
      : { outcome: 'in_flight' };
  }

  /** The claim's row while still in flight under this lock; no id: any claim made at `lockedAt`. */
  const stillOurs = (claim: Omit<IdempotencyClaim, 'id'> & { id?: string }) =>
    table().where({
      subject: claim.subject,
      key: claim.key,
      ...(claim.id === undefined ? {} : { id: claim.id }),
      state: 'in_flight',
      locked_at: claim.lockedAt,
    });

  const unlock = async (claim: Omit<IdempotencyClaim, 'id'> & { id?: string }) => {
    await stillOurs(claim).update({ locked_at: new Date(0) });
  };

  function letGo(claim: Omit<IdempotencyClaim, 'id'> & { id?: string }, giveUpAt: Date) {
    return unlock(claim).catch((error: unknown) => {
      if (!isDatabaseUnavailable(error) || Date.now() >= giveUpAt.getTime()) return;
      setTimeout(() => void letGo(claim, giveUpAt), LET_GO_RETRY_MS).unref();
    });
  }

  return {
    async claim(request) {
      try {
        for (let i = 0; i < 3; i += 1) {
          const outcome = await db.transaction((trx) => attempt(trx, request));
          if (outcome) return outcome;
        }
      } catch (error) {
        // The claim may have committed with its answer lost: nobody is working on it.
        if (isDatabaseUnavailable(error)) {
          const { subject, key, now } = request;
          void letGo({ subject, key, lockedAt: now }, new Date(now.getTime() + request.staleMs));
        }
        throw error;
      }
      return { outcome: 'in_flight' };
    },
    async release(claim) {
      await stillOurs(claim).del();
    },
    unlock,
    letGo,
    async storedResponse(subject, key) {
      const row = await table().where({ subject, key, state: 'completed' }).first();
      return row && responseOf(row);
    },
  };
}
