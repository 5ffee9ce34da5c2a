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
  | 'email_changed'
  | 'account_closed'
  | 'session_ended'
  | 'sessions_ended'
  | 'email_verified'
  | 'email_verification_sent'
  | 'token_exchanged'
  | 'role_created'
  | 'role_updated'
  | 'role_deleted';

export interface AuditEvent {
  id: string;
  at: Date;
  kind: AuditKind;
  clientId: string | null;
  subject: string | null;
  grantId: string | null;
  detail: Record<string, unknown>;
}

export interface NewAuditEvent {
  kind: AuditKind;
  clientId?: string | undefined;
  subject?: string | undefined;
  grantId?: string | undefined;
  detail?: Record<string, unknown>;
}

export interface AuditRepo {
  record(event: NewAuditEvent): Promise<void>;
  /** Newest first. */
  list(options: {
    kind?: string | undefined;
    before?: string | undefined;
    limit: number;
  }): Promise<AuditEvent[]>;
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
  detail: Record<string, unknown>;
}

const toEvent = (r: AuditRow): AuditEvent => ({
  id: String(r.id),
  at: r.at,
  kind: r.kind,
  clientId: r.client_id,
  subject: r.subject,
  grantId: r.grant_id,
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
        detail: toJsonb(event.detail ?? {}),
      });
    },
    async list({ kind, before, limit }) {
      const q = db<AuditRow>('audit_events').orderBy('id', 'desc').limit(limit);
      if (kind) q.where('kind', kind);
      if (before) q.where('id', '<', Number(before));
      return (await q).map(toEvent);
    },
    async listBySubject(subject) {
      return (await db<AuditRow>('audit_events').where({ subject }).orderBy('id')).map(toEvent);
    },
  };
}
