import Provider, {
  errors,
  type Adapter,
  type AdapterPayload,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import { toUser, type User } from '@portcullis/accounts';
import { coalesced, prepared, toJsonb, type Db, type UserRow } from '@portcullis/db';
import { containsNul } from '@portcullis/observability';
import {
  dropAsides,
  memoizeInRequest,
  putAside,
  rememberAccount,
  takeAside,
} from '../provider/request-memo.js';
import type { ArtifactGuard, FreshRevocations } from '../provider/subject-logout.js';
import { DependencyUnavailableError } from '../unavailable.js';
import type { ClientsRepo } from './clients-repo.js';

interface PayloadRow {
  payload: AdapterPayload;
  consumed_at: Date | null;
  /** When it was issued (a session: signed in), in ms; null on rows from before migration 011. */
  issued_at: Date | null;
}

/**
 * Tokens that oidc-provider redeems by reading the token, then the session it is bound
 * to (by uid) and then its grant (by id): three round trips, one after the other. For
 * these the adapter reads all three rows in one query and puts the grant and session
 * aside for the two reads that follow in the same request.
 */
const READ_WITH_GRANT_AND_SESSION = new Set(['RefreshToken', 'AuthorizationCode']);

/**
 * A refresh token whose rotation was abandoned (consumed, its successor never saved, and
 * the rotation began longer ago than AdapterOptions.rotationBound) reads as unconsumed:
 * nobody holds a successor, so its holder may rotate it again (docs/security.md).
 */
const CONSUMED_AT_AS_READ = `case when awaiting_successor
    and coalesce(rotation_started_at, consumed_at) < now() - make_interval(secs => ?::float8)
    then null else consumed_at end as consumed_at`;

const unexpired = (alias: string) => `(${alias}.expires_at is null or ${alias}.expires_at > ?)`;
/**
 * Tokens (type, id) with their grant, their session, their subject's logout-everywhere
 * revocations (as rows of type SubjectRevocation, payload {before}) and their subject's
 * user row without its password hash (type Account; the next read oidc-provider makes,
 * findAccount, is then answered without a round trip); `n` is the key's position, from 1. One statement that starts after the request: every revocation
 * committed before the request is in its answer. An expired authorization code is still
 * read (until purged), as an expired device code is, so /token says "expired", not
 * "unknown": oidc-provider checks the code's own `exp`. `read_at` is when it ran, by the
 * database clock, which bounds when the token's consume may still arrive (CONSUME_SQL).
 */
const TOKEN_GRANT_SESSION_SQL = `with t as (
    select k.n, p.type, p.payload, ${CONSUMED_AT_AS_READ}, p.issued_at, p.grant_id
    from unnest(?::text[], ?::text[]) with ordinality as k(type, id, n)
    join oidc_payloads p on p.type = k.type and p.id = k.id
      and (p.type = 'AuthorizationCode' or ${unexpired('p')})
  )
  select t.n, t.type, t.payload, t.consumed_at, t.issued_at, now() as read_at from t
  union all
  select t.n, g.type, g.payload, g.consumed_at, g.issued_at, now() from t
    join oidc_payloads g on g.type = 'Grant' and g.id = t.grant_id and ${unexpired('g')}
  union all
  select t.n, s.type, s.payload, s.consumed_at, s.issued_at, now() from t
    join oidc_payloads s on s.type = 'Session' and s.uid = t.payload->>'sessionUid'
      and ${unexpired('s')}
  union all
  select t.n, 'SubjectRevocation', jsonb_build_object('before', r.issued_before), null, null,
    now() from t
    join revocations r on r.kind = 'subject' and r.value = t.payload->>'accountId'
      and r.expires_at > now()
  union all
  select t.n, 'Account', to_jsonb(u) - 'password_hash', null, null, now() from t
    join users u on u.id = t.payload->>'accountId'`;

/**
 * Successors one refresh token may have (docs/security.md, "Siblings"): the rotation and
 * two honest retries (a lost answer, a second tab refreshing at once) fit; a token
 * replayed in a burst yields no more than this many access and refresh tokens.
 */
export const MAX_SIBLINGS = 3;

/**
 * Marks artifacts consumed, locking them in one order (type, id) so that two batches
 * sharing artifacts cannot deadlock; a row another statement consumed first is re-checked
 * against the condition once its lock is released (PostgreSQL re-checks it).
 *
 * An artifact is consumable when it is unconsumed and, for a refresh token rotated from
 * another, it claims its parent's used_successor (or the parent row is gone): of two
 * successors of one token, the first one used is the chain, the other is dead. The claim
 * is an UPDATE of the parent row, so siblings used at once wait on its row lock and only
 * one sees the column free; in one statement, PostgreSQL updates the parent once.
 *
 * A refresh token consumed less than the reuse interval ago (bindings 7 and 8, seconds;
 * 0 turns it off) is consumable again while none of its successors has been used: the
 * honest retry after a lost response (docs/security.md). The row keeps its first
 * consumed_at, so the window does not slide. With no interval that branch is off, not
 * merely empty: now() is when a transaction began, so one that waited on the row lock
 * while another consumed the token could see that consume as later than its now().
 *
 * A refresh token whose rotation was abandoned (see CONSUMED_AT_AS_READ; bindings 6 and 9)
 * is consumable again at any time.
 *
 * A key read in this request (`read_at`, by the database clock) is consumed only within
 * the rotation bound of that read (binding 1): a consume held in a network that stopped
 * forwarding, its client long answered 503, is refused when it arrives (granted -1, the
 * request answers 503) instead of consuming the token after the fact.
 *
 * Each key comes with how many callers present it (`n`); the answer says how many of them
 * consumed it (`granted`). A refresh token's `rotations` count its successors: retries in
 * the interval stop at MAX_SIBLINGS (binding 11; binding 10 is the interval again), and a
 * key refused only for that is answered with granted 0 (not reuse), its row unchanged.
 */
const CONSUME_SQL = `with keys as (
    select type, id, n, read_at,
      read_at is not null and now() >= read_at + make_interval(secs => ?::float8) as late
    from unnest(?::text[], ?::text[], ?::int[], ?::timestamptz[]) as k(type, id, n, read_at)
  ),
  claimed as (
    update oidc_payloads parent set used_successor = child.id
    from keys join oidc_payloads child on child.type = keys.type and child.id = keys.id
    where child.rotated_from is not null and child.consumed_at is null
      and parent.type = child.type and parent.id = child.rotated_from
      and (parent.used_successor is null or parent.used_successor = child.id)
    returning child.type, child.id
  ),
  locked as (
    select p.type, p.id, k.n, coalesce(p.rotations, 0) as prior,
      p.consumed_at is null or (p.type = 'RefreshToken' and p.awaiting_successor
        and coalesce(p.rotation_started_at, p.consumed_at)
          < now() - make_interval(secs => ?::float8)) as fresh
    from oidc_payloads p
    join keys k on p.type = k.type and p.id = k.id and not k.late
    where (p.consumed_at is null and (p.rotated_from is null
        or exists (select 1 from claimed c where c.type = p.type and c.id = p.id)
        or not exists (
          select 1 from oidc_payloads o where o.type = p.type and o.id = p.rotated_from)))
      or (p.type = 'RefreshToken' and ?::float8 > 0
        and p.consumed_at > now() - make_interval(secs => ?::float8)
        and not exists (
          select 1 from oidc_payloads c
          where c.rotated_from = p.id and c.type = p.type and c.consumed_at is not null))
      or (p.type = 'RefreshToken' and p.awaiting_successor
        and coalesce(p.rotation_started_at, p.consumed_at)
          < now() - make_interval(secs => ?::float8))
    order by p.type, p.id
    for update of p
  ),
  granted as (
    select type, id, prior, case when type = 'RefreshToken' and ?::float8 > 0
      then greatest(least(n, ?::int - prior), case when fresh then 1 else 0 end)
      else 1 end as granted
    from locked
  ),
  consumed as (
    update oidc_payloads p set consumed_at = coalesce(p.consumed_at, now()),
      awaiting_successor = p.type = 'RefreshToken',
      rotation_started_at = case when p.type = 'RefreshToken' then now() end,
      rotations = case when p.type = 'RefreshToken' then g.prior + g.granted end
    from granted g
    where p.type = g.type and p.id = g.id and g.granted > 0
    returning p.type, p.id, g.granted
  )
  select type, id, granted from consumed
  union all
  select type, id, 0 from granted where granted <= 0
  union all
  select type, id, -1 from keys where late`;

/**
 * Rows given as parallel text arrays (one binding each, same on pg and PGlite), written in
 * (type, id) order so that two batches sharing rows lock them in the same order.
 * `issued_at` is kept when a row is saved again, except when a session is signed in anew
 * (its loginTs changes): logout everywhere compares against it. Saving a rotated refresh
 * token's successor clears its parent's awaiting_successor in the same statement.
 *
 * A successor is saved only within the rotation bound (binding 10, seconds) of its
 * parent's rotation: one that arrives later (held in a network that stopped forwarding,
 * its client long answered 503) would land after the rotation counts as abandoned, and
 * turn the client's retry into reuse. It is refused instead and missing from the answer.
 * (A parent that is gone was revoked with its grant, which makes the successor dead anyway.)
 */
const UPSERT_SQL = `with r as (
    select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
      ?::text[], ?::text[], ?::text[])
      as r(id, type, payload, grant_id, user_code, uid, expires_at, rotated_from, issued_at)
  ),
  accepted as (
    select * from r where not exists (
      select 1 from oidc_payloads parent
      where parent.type = r.type and parent.id = r.rotated_from
        and coalesce(parent.rotation_started_at, parent.consumed_at)
          <= now() - make_interval(secs => ?::float8))
  ),
  rotated as (
    update oidc_payloads parent set awaiting_successor = false from accepted r
    where parent.type = r.type and parent.id = r.rotated_from and parent.awaiting_successor
  )
  insert into oidc_payloads
    (id, type, payload, grant_id, user_code, uid, expires_at, rotated_from, issued_at)
  select id, type, payload::jsonb, grant_id, user_code, uid, expires_at::timestamptz,
    rotated_from, issued_at::timestamptz
  from accepted
  order by type, id
  on conflict (type, id) do update set payload = excluded.payload, grant_id = excluded.grant_id,
    user_code = excluded.user_code, uid = excluded.uid, expires_at = excluded.expires_at,
    issued_at = case
      when oidc_payloads.payload->'loginTs' is distinct from excluded.payload->'loginTs'
      then excluded.issued_at else oidc_payloads.issued_at end
  returning type, id`;

interface ArtifactKey {
  type: string;
  id: string;
}

interface ArtifactRow extends ArtifactKey {
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: string | null;
  /** The refresh token this one replaced (rotation), else null. */
  rotated_from: string | null;
  issued_at: string;
}

const keyOf = ({ type, id }: ArtifactKey) => JSON.stringify([type, id]);

/** What a consume did for one caller; capped: a retry in the interval past MAX_SIBLINGS. */
type Consumed = 'consumed' | 'reused' | 'capped' | 'late';

/** A key to consume, with when this request read it (database clock), if it did. */
interface ConsumeKey extends ArtifactKey {
  readAt?: Date | undefined;
}

/**
 * The adapter's hot statements, coalesced across concurrent requests (packages/db
 * `coalesced`): a refresh under load shares its reads, its consume and its write with the
 * other requests of the same turn of the event loop. Each caller still gets exactly the
 * answer it would get alone.
 */
function createStatements(db: Db, refreshReuseInterval: number, rotationBound: number) {
  return {
    /** Each key's token row with its grant and session rows (none when not found). */
    readWithGrantAndSession: coalesced(async (keys: readonly ArtifactKey[]) => {
      const now = new Date();
      const types = keys.map((k) => k.type);
      const ids = keys.map((k) => k.id);
      const result = await prepared(db, TOKEN_GRANT_SESSION_SQL, [
        rotationBound,
        types,
        ids,
        now,
        now,
        now,
      ]);
      const { rows } = result as { rows: (ReadRow & { n: unknown })[] };
      const byKey = keys.map((): ReadRow[] => []);
      for (const row of rows) byKey[Number(row.n) - 1]?.push(row);
      return byKey;
    }),

    /**
     * Per caller: consumed, reused, capped (a retry past MAX_SIBLINGS) or late (arrived
     * past the rotation bound of its read; callers of one key share its earliest read).
     * The same key several times in one batch is one UPDATE of one row, answered exactly
     * as if they came in turn: without a reuse interval only the first caller consumes and the rest
     * are reuse; with one, the others are retries of a token consumed an instant ago whose
     * successors are unused, and consume too, up to the cap.
     */
    consume: coalesced(async (keys: readonly ConsumeKey[]) => {
      const callers = new Map<string, { key: ArtifactKey; n: number; readAt?: Date }>();
      for (const key of keys) {
        const seen = callers.get(keyOf(key)) ?? { key, n: 0 };
        seen.n += 1;
        if (key.readAt && !(seen.readAt && seen.readAt <= key.readAt)) seen.readAt = key.readAt;
        callers.set(keyOf(key), seen);
      }
      const distinct = [...callers.values()];
      const result = await prepared(db, CONSUME_SQL, [
        rotationBound,
        distinct.map((c) => c.key.type),
        distinct.map((c) => c.key.id),
        distinct.map((c) => c.n),
        // A null read_at: not read in this request, no bound.
        distinct.map((c) => c.readAt?.toISOString() ?? null) as string[],
        rotationBound,
        refreshReuseInterval,
        refreshReuseInterval,
        rotationBound,
        refreshReuseInterval,
        MAX_SIBLINGS,
      ]);
      const rows = (result as { rows: (ArtifactKey & { granted: unknown })[] }).rows;
      const left = new Map(rows.map((r) => [keyOf(r), Number(r.granted)]));
      const retriesAllowed = refreshReuseInterval > 0;
      return keys.map((key): Consumed => {
        const granted = left.get(keyOf(key));
        if (granted === undefined) return 'reused';
        if (granted < 0) return 'late';
        if (granted > 0) {
          left.set(keyOf(key), granted - 1);
          return 'consumed';
        }
        return retriesAllowed && key.type === 'RefreshToken' ? 'capped' : 'reused';
      });
    }),

    /**
     * Inserts or replaces rows; the same key twice in one batch keeps the last one. false
     * for a successor refused as too late (see UPSERT_SQL).
     */
    upsert: coalesced(async (rows: readonly ArtifactRow[]) => {
      const last = [...new Map(rows.map((r) => [keyOf(r), r])).values()];
      const column = (name: keyof ArtifactRow) => last.map((r) => r[name]) as string[];
      const result = await prepared(db, UPSERT_SQL, [
        column('id'),
        column('type'),
        column('payload'),
        column('grant_id'),
        column('user_code'),
        column('uid'),
        column('expires_at'),
        column('rotated_from'),
        column('issued_at'),
        rotationBound,
      ]);
      const saved = new Set((result as { rows: ArtifactKey[] }).rows.map(keyOf));
      return rows.map((row) => saved.has(keyOf(row)));
    }),
  };
}

type Statements = ReturnType<typeof createStatements>;

const asideKey = (type: string, where: Record<string, string>) =>
  `oidc ${type} ${Object.entries(where).flat().join(' ')}`;

const TOO_MANY_SIBLINGS = 'refresh token retried too often';

/** What a failed consume means to the token endpoint, per model (the texts oidc-provider uses). */
const ALREADY_USED: Record<string, string> = {
  RefreshToken: 'refresh token already used',
  AuthorizationCode: 'authorization code already consumed',
  DeviceCode: 'device code already consumed',
};

/** The user read with a token (undefined: no such user), as the accounts repository gives it. */
function accountOf(rows: readonly { type: string; payload: unknown }[]): User | undefined {
  const row = rows.find((r) => r.type === 'Account')?.payload as
    | (Omit<UserRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string })
    | undefined;
  if (!row) return undefined;
  return toUser({
    ...row,
    password_hash: '',
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
  });
}

const epoch = (date: Date) => Math.floor(date.getTime() / 1000);

/** Unix seconds with milliseconds, as the deny list compares them. */
const seconds = (date: Date | null) => (date ? date.getTime() / 1000 : undefined);

/** A row of TOKEN_GRANT_SESSION_SQL. */
type ReadRow = PayloadRow & { type: string; read_at: Date };

const readAtKey = (type: string, id: string) => `read_at ${type} ${id}`;

/** Kept for the rest of the request: the token's consume must follow within the bound. */
function rememberReadAt(type: string, id: string, readAt: Date): void {
  void memoizeInRequest(readAtKey(type, id), () => Promise.resolve<Date | undefined>(readAt));
}

/** When this request read the token (database clock); undefined when it did not. */
const readAtOf = (type: string, id: string) =>
  memoizeInRequest(readAtKey(type, id), () => Promise.resolve<Date | undefined>(undefined));

const grantIssuedKey = (grantId: string) => `grant issued_at ${grantId}`;

/** Kept for the rest of the request: the access token's `grant_iat` claim reads it. */
function rememberGrantIssuedAt(grantId: string, issuedAt: Date | null): void {
  void memoizeInRequest(grantIssuedKey(grantId), () => Promise.resolve(seconds(issuedAt)));
}

/**
 * When the grant was created (Unix seconds with milliseconds), as read by this request;
 * undefined when it was not read or predates migration 011.
 */
export function grantIssuedAt(grantId: string): Promise<number | undefined> {
  return memoizeInRequest(grantIssuedKey(grantId), () => Promise.resolve(undefined));
}

const currentCtx = () => (Provider as unknown as { ctx?: KoaContextWithOIDC }).ctx;

/**
 * The refresh token a new one replaces: oidc-provider names it RotatedRefreshToken in the
 * request that rotates it, just before it saves the successor.
 */
function rotatedFrom(type: string, id: string): string | null {
  if (type !== 'RefreshToken') return null;
  const rotated = currentCtx()?.oidc.entities.RotatedRefreshToken as { jti?: string } | undefined;
  return rotated?.jti && rotated.jti !== id ? rotated.jti : null;
}

export interface AdapterOptions {
  /**
   * Seconds in which a just-rotated refresh token may be presented again and rotate
   * again, while none of its successors has been used (REFRESH_REUSE_INTERVAL). 0: never.
   */
  refreshReuseInterval?: number;
  /**
   * Seconds after which a refresh token consumed without its successor being saved counts
   * as an abandoned rotation (its client got an error), so it may be rotated again. Siblings
   * this makes are settled like any retry's (used_successor), so the bound only keeps
   * requests racing a rotation that is going well from making them.
   */
  rotationBound?: number;
}

const DEFAULT_ROTATION_BOUND = 2.5;

const statementsFor = (db: Db, options: AdapterOptions) =>
  createStatements(
    db,
    options.refreshReuseInterval ?? 0,
    options.rotationBound ?? DEFAULT_ROTATION_BOUND,
  );

/**
 * oidc-provider's storage, one row per artifact in `oidc_payloads` (clients in
 * `clients`). Rows past `expires_at` are invisible and purged by `purgeExpired`.
 *
 * `consume` is one conditional UPDATE. oidc-provider checks `payload.consumed` and then
 * calls `consume()` (check-then-act), so two parallel redemptions of one code or refresh
 * token can both pass the check; the loser's UPDATE matches no row, and it is then
 * treated exactly as a detected reuse: the grant is revoked (every artifact of it is
 * deleted) and the token endpoint answers invalid_grant with oidc-provider's own
 * description, so the 'grant.error' listener raises the same alert as for a sequential
 * reuse (RFC 9700 §4.14, RFC 6749 §4.1.2).
 */
export class KnexOidcAdapter implements Adapter {
  constructor(
    private readonly db: Db,
    private readonly clients: ClientsRepo,
    private readonly type: string,
    private readonly guard?: ArtifactGuard,
    private readonly options: AdapterOptions = {},
    private readonly statements: Statements = statementsFor(db, options),
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    dropAsides();
    // oidc-provider parses its own bodies, past the app's NUL check, and stores parameters
    // a client sent (state, acr_values, ...) with the artifact.
    if (containsNul(id) || containsNul(payload)) {
      throw new errors.InvalidRequest('a parameter contains a NUL character');
    }
    if (this.type === 'Client') {
      await this.clients.put(id, payload as Record<string, unknown>);
      return;
    }
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    const saved = await this.statements.upsert({
      id,
      type: this.type,
      payload: toJsonb(payload),
      grant_id: payload.grantId ?? null,
      user_code: payload.userCode ?? null,
      uid: payload.uid ?? null,
      expires_at: expiresAt?.toISOString() ?? null,
      rotated_from: rotatedFrom(this.type, id),
      issued_at: new Date().toISOString(),
    });
    // The rotation outlasted its bound and counts as abandoned: the client retries (503).
    if (!saved) {
      const late = new Error('a refresh token successor came after its rotation bound');
      throw new DependencyUnavailableError('database', late);
    }
  }

  /**
   * PostgreSQL cannot hold a NUL in text, so no stored artifact has one in its id, uid or
   * user code: such a key names nothing and is not sent to the database, where it would
   * fail the query (README "Bad input").
   */
  async find(id: string): Promise<AdapterPayload | undefined> {
    if (containsNul(id)) return undefined;
    if (this.type === 'Client') return (await this.clients.findMetadata(id)) as AdapterPayload;
    if (READ_WITH_GRANT_AND_SESSION.has(this.type)) return this.findWithGrantAndSession(id);
    return this.findWhere({ id });
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (containsNul(userCode)) return undefined;
    return this.findWhere({ user_code: userCode });
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (containsNul(uid)) return undefined;
    return this.findWhere({ uid });
  }

  async consume(id: string): Promise<void> {
    dropAsides();
    const readAt = await readAtOf(this.type, id);
    const consumed = await this.statements.consume({ type: this.type, id, readAt });
    if (consumed === 'consumed') return;
    if (consumed === 'late') {
      const late = new Error('a consume came after the rotation bound of its read');
      throw new DependencyUnavailableError('database', late);
    }
    // Refused as a retry, not as reuse: the grant stays and no alert is raised.
    if (consumed === 'capped') throw new errors.InvalidGrant(TOO_MANY_SIBLINGS);
    const row = await this.db('oidc_payloads')
      .where({ type: this.type, id })
      .first<{ grant_id: string | null } | undefined>('grant_id');
    if (row?.grant_id) {
      await revokeGrantRows(this.db, row.grant_id);
      // As oidc-provider's own revoke() does, so listeners (deny list) see this grant too.
      const ctx = currentCtx();
      ctx?.oidc.provider.emit('grant.revoked', ctx, row.grant_id);
    }
    throw new errors.InvalidGrant(ALREADY_USED[this.type] ?? 'already consumed');
  }

  async destroy(id: string): Promise<void> {
    dropAsides();
    if (this.type === 'Client') {
      await this.clients.delete(id);
      return;
    }
    await this.db('oidc_payloads').where({ type: this.type, id }).del();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    dropAsides();
    await this.db('oidc_payloads').where({ type: this.type, grant_id: grantId }).del();
  }

  private async findWhere(where: Record<string, string>): Promise<AdapterPayload | undefined> {
    const aside = takeAside<PayloadRow | null>(asideKey(this.type, where));
    let row: PayloadRow | null | undefined;
    if (aside) row = aside.value;
    else {
      const query = this.db('oidc_payloads').where({ type: this.type, ...where });
      // An expired device code is still returned (until purged) so that polling gets
      // RFC 8628's expired_token from oidc-provider's own `exp` check, not "not found".
      if (this.type !== 'DeviceCode') {
        query.andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', new Date()));
      }
      row = await query.first<PayloadRow | undefined>(
        'payload',
        this.db.raw(CONSUMED_AT_AS_READ, [this.options.rotationBound ?? DEFAULT_ROTATION_BOUND]),
        'issued_at',
      );
    }
    if (row && this.type === 'Grant' && typeof where['id'] === 'string')
      rememberGrantIssuedAt(where['id'], row.issued_at);
    return row ? this.checked(row, seconds(row.issued_at)) : undefined;
  }

  /**
   * A token read with its grant, session and subject revocations in one statement; the
   * grant and session are put aside, the revocations go to the logout guard.
   */
  private async findWithGrantAndSession(id: string): Promise<AdapterPayload | undefined> {
    const rows = await this.statements.readWithGrantAndSession({ type: this.type, id });
    const token = rows.find((r) => r.type === this.type);
    if (!token) return undefined;
    rememberReadAt(this.type, id, token.read_at);
    // Stored in milliseconds (migration 011); the guard compares in seconds.
    const revokedBefore = rows
      .filter((r) => r.type === 'SubjectRevocation')
      .map((r) => Number((r.payload as { before?: unknown }).before) / 1000);
    const { grantId, sessionUid, accountId } = token.payload;
    if (typeof accountId === 'string') rememberAccount(accountId, accountOf(rows));
    const grant = rows.find((r) => r.type === 'Grant');
    // Put aside even when missing: "no such grant" was just read, not worth a second look.
    if (typeof grantId === 'string') putAside(asideKey('Grant', { id: grantId }), grant ?? null);
    if (typeof sessionUid === 'string')
      putAside(
        asideKey('Session', { uid: sessionUid }),
        rows.find((r) => r.type === 'Session') ?? null,
      );
    // A refresh-token chain counts from its grant, so a rotation racing a logout cannot
    // launder a grant from before it.
    const issuedAt = seconds(
      this.type === 'RefreshToken' ? (grant?.issued_at ?? null) : token.issued_at,
    );
    return this.checked(token, issuedAt, { subjectRevokedBefore: revokedBefore });
  }

  /** The stored payload as oidc-provider expects it, unless the logout guard refuses it. */
  private async checked(
    row: PayloadRow,
    issuedAt: number | undefined,
    fresh?: FreshRevocations,
  ): Promise<AdapterPayload | undefined> {
    if (await this.guard?.(this.type, row.payload, issuedAt, fresh)) {
      await this.forget(row.payload);
      return undefined;
    }
    if (!row.consumed_at || this.mayRetry(row.consumed_at)) return row.payload;
    return { ...row.payload, consumed: epoch(row.consumed_at) };
  }

  /**
   * A refresh token rotated within the reuse interval is handed to oidc-provider as
   * unconsumed, so that it tries to rotate it again instead of calling it reuse at once;
   * `consume` then decides in the database (the interval by the database clock, and
   * whether a successor was used) and refuses with the reuse path when it must.
   */
  private mayRetry(consumedAt: Date): boolean {
    const interval = this.options.refreshReuseInterval ?? 0;
    return (
      this.type === 'RefreshToken' &&
      interval > 0 &&
      Date.now() - consumedAt.getTime() < interval * 1000
    );
  }

  /** An artifact the guard refused: its whole grant goes (announced like a revocation). */
  private async forget(payload: AdapterPayload): Promise<void> {
    dropAsides();
    const grantId = this.type === 'Grant' ? payload.jti : payload.grantId;
    if (!grantId) {
      if (payload.jti)
        await this.db('oidc_payloads').where({ type: this.type, id: payload.jti }).del();
      return;
    }
    await revokeGrantRows(this.db, grantId);
    const ctx = currentCtx();
    ctx?.oidc.provider.emit('grant.revoked', ctx, grantId);
  }
}

/** Deletes every artifact of a grant and the grant itself. */
export async function revokeGrantRows(db: Db, grantId: string): Promise<void> {
  await db('oidc_payloads')
    .where({ grant_id: grantId })
    .orWhere((q) => q.where({ type: 'Grant', id: grantId }))
    .del();
}

/** Deletes expired artifacts. Consumed refresh tokens stay until their own expiry. */
export async function purgeExpired(db: Db, now = new Date()): Promise<number> {
  const gone = await db('oidc_payloads').where('expires_at', '<', now).del().returning('id');
  await db('device_polls').where('expires_at', '<', now).del();
  return gone.length;
}

/** The adapter factory oidc-provider calls once per model name. */
export function createOidcAdapterFactory(
  db: Db,
  clients: ClientsRepo,
  guard?: ArtifactGuard,
  options: AdapterOptions = {},
) {
  const statements = statementsFor(db, options);
  return (name: string): Adapter =>
    new KnexOidcAdapter(db, clients, name, guard, options, statements);
}
