import { toJsonb, type Db } from '@portcullis/db';

export type AuditKind =
  | 'mfa_enrolled'
  | 'mfa_removed'
  | 'mfa_failed'
  | 'mfa_reset'
  | 'recovery_codes_generated'
  | 'recovery_code_used'
  | 'refresh_token_reuse'
  | 'code_reuse'
  | 'grant_revoked'
  | 'login_failed'
  | 'login_rate_limited'
  | 'client_created'
  | 'client_deleted'
  | 'client_updated'
  | 'client_secret_rotated'
  | 'client_registered'
  | 'registration_token_issued'
  | 'user_created'
  | 'user_roles_changed'
  | 'user_disabled'
  | 'user_enabled'
  | 'password_reset'
  | 'signing_key_rotated'
  | 'passkey_added'
  | 'passkey_removed'
  | 'passkey_refused'
  | 'password_changed'
  | 'email_change_requested'
  | 'email_change_cancelled'
  | 'email_changed'
  | 'account_closed'
  | 'session_ended'
  | 'sessions_ended'
  | 'email_verified'
  | 'email_verification_sent'
  | 'token_exchanged'
  | 'role_created'
  | 'role_updated'
  | 'role_deleted'
  | 'resource_created'
  | 'resource_updated'
  | 'resource_deleted'
  | 'permission_created'
  | 'permission_updated'
  | 'permission_deleted'
  | 'signing_key_retired';

export interface AuditEvent {
  id: string;
  at: Date;
  kind: AuditKind;
  clientId: string | null;
  subject: string | null;
  grantId: string | null;
  /** The administrator of an admin API change: a user id or `admin-token`; else null. */
  actor: string | null;
  detail: Record<string, unknown>;
}

export interface NewAuditEvent {
  kind: AuditKind;
  clientId?: string | undefined;
  subject?: string | undefined;
  grantId?: string | undefined;
  actor?: string | null | undefined;
  detail?: Record<string, unknown>;
}

/** GET /admin/audit's filters; `before` is a row id (the previous page's last). */
export interface AuditFilter {
  kind?: string | undefined;
  actor?: string | undefined;
  subject?: string | undefined;
  clientId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  before?: string | undefined;
  limit: number;
}

export interface AuditRepo {
  record(event: NewAuditEvent): Promise<void>;
  /** Newest first; `since` inclusive, `until` exclusive. */
  list(filter: AuditFilter): Promise<AuditEvent[]>;
  /** A user's own entries, oldest first (their data download). */
  listBySubject(subject: string): Promise<AuditEvent[]>;
}

interface AuditRow {
  id: string | number;
  at: Date;
  kind: AuditKind;
  client_id: string | null;
  subject: string | null;
  grant_id: string | null;
  actor: string | null;
  detail: Record<string, unknown>;
}

const toEvent = (r: AuditRow): AuditEvent => ({
  id: String(r.id),
  at: r.at,
  kind: r.kind,
  clientId: r.client_id,
  subject: r.subject,
  grantId: r.grant_id,
  actor: r.actor,
  detail: r.detail,
});

export function createAuditRepo(db: Db): AuditRepo {
  return {
    async record(event) {
      await db('audit_events').insert({
        kind: event.kind,
        client_id: event.clientId ?? null,
        subject: event.subject ?? null,
        grant_id: event.grantId ?? null,
        actor: event.actor ?? null,
        detail: toJsonb(event.detail ?? {}),
      });
    },
    async list({ kind, actor, subject, clientId, since, until, before, limit }) {
      const q = db<AuditRow>('audit_events').orderBy('id', 'desc').limit(limit);
      if (kind) q.where('kind', kind);
      if (actor) q.where('actor', actor);
      if (subject) q.where('subject', subject);
      if (clientId) q.where('client_id', clientId);
      if (since) q.where('at', '>=', since);
      if (until) q.where('at', '<', until);
      if (before) q.where('id', '<', Number(before));
      return (await q).map(toEvent);
    },
    async listBySubject(subject) {
      return (await db<AuditRow>('audit_events').where({ subject }).orderBy('id')).map(toEvent);
    },
  };
}
