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
} from './request-memo.js';
import { DependencyUnavailableError } from '../kernel/unavailable.js';
import type { ClientsRepo } from './clients-repo.js';

/** Subject revocations read in the artifact's own statement (as fresh as a new poll). */
export interface FreshRevocations {
  subjectRevokedBefore: number[];
}

/** Whether a stored artifact was cut off by a logout everywhere; `issuedAt` in Unix s with ms. */
export type ArtifactGuard = (
  model: string,
  payload: AdapterPayload,
  issuedAt: number | undefined,
  fresh?: FreshRevocations,
) => Promise<boolean>;

interface PayloadRow {
  payload: AdapterPayload;
  consumed_at: Date | null;
  /** When it was issued (a session: signed in), in ms; null on rows from before migration 011. */
  issued_at: Date | null;
}

/** Read with their grant and session in one query (docs/architecture.md "The OIDC adapter"). */
const READ_WITH_GRANT_AND_SESSION = new Set(['RefreshToken', 'AuthorizationCode']);

/**
 * An abandoned rotation reads as unconsumed
 * (docs/security.md "Refresh-token rotation and the reuse interval").
 */
const CONSUMED_AT_AS_READ = `case when awaiting_successor
    and coalesce(rotation_started_at, consumed_at) < now() - make_interval(secs => ?::float8)
    then null else consumed_at end as consumed_at`;

const unexpired = (alias: string) => `(${alias}.expires_at is null or ${alias}.expires_at > ?)`;
/** A token, its grant, session, revocations and user (docs/architecture.md "The OIDC adapter"). */
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
 * Successors one refresh token may have
 * (docs/security.md "Refresh-token rotation and the reuse interval").
 */
export const MAX_SIBLINGS = 3;

/**
 * Consumes artifacts in (type, id) lock order so batches cannot deadlock; the rules and the
 * bindings: docs/architecture.md "The OIDC adapter".
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

/** Saves rows in (type, id) order; why: docs/architecture.md "The OIDC adapter". */
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

/** The hot statements, coalesced across requests; each caller gets the answer it would alone. */
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

    /** Per caller: consumed, reused, capped or late; a repeated key answers as if in turn. */
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

    /** Inserts or replaces rows (last of a key wins); false for a successor refused as late. */
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

/** When the grant was created (Unix s with ms), as read by this request; undefined if not read. */
export function grantIssuedAt(grantId: string): Promise<number | undefined> {
  return memoizeInRequest(grantIssuedKey(grantId), () => Promise.resolve(undefined));
}

const currentCtx = () => (Provider as unknown as { ctx?: KoaContextWithOIDC }).ctx;

/** The refresh token a new one replaces (oidc-provider's RotatedRefreshToken in this request). */
function rotatedFrom(type: string, id: string): string | null {
  if (type !== 'RefreshToken') return null;
  const rotated = currentCtx()?.oidc.entities.RotatedRefreshToken as { jti?: string } | undefined;
  return rotated?.jti && rotated.jti !== id ? rotated.jti : null;
}

export interface AdapterOptions {
  /** Seconds a rotated refresh token may rotate again (REFRESH_REUSE_INTERVAL); 0: never. */
  refreshReuseInterval?: number;
  /** Seconds after which a consume without a saved successor counts as an abandoned rotation. */
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
 * oidc-provider's storage, one row per artifact in `oidc_payloads` (clients in `clients`).
 * A lost race in `consume` is reuse (RFC 9700 §4.14; docs/architecture.md "The OIDC adapter").
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
    // oidc-provider parses its own bodies past the app's NUL check.
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

  /** A key with NUL names nothing and would fail the query in PostgreSQL (README "Bad input"). */
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
      // RFC 8628: an expired device code must answer expired_token, not "not found".
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
    // A refresh-token chain counts from its grant, so a rotation racing a logout cannot launder it.
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

  /** In the reuse interval a rotated refresh token reads as unconsumed; `consume` decides. */
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
