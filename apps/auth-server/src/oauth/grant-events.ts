import type { SharedDenyList } from '@portcullis/db';
import type { KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { Logger } from 'pino';
import type { AlertSender } from '../kernel/alerts.js';
import type { AuditRepo } from '../data/audit-repo.js';
import type { GrantMetrics } from '../kernel/metrics.js';
import { isUnavailable, markUnavailable } from '../kernel/unavailable.js';

export interface GrantEventDeps {
  logger: Logger;
  audit: AuditRepo;
  denyList: SharedDenyList;
  alerts: AlertSender;
  /** Seconds an access token of a revoked grant can still be valid. */
  accessTokenTtl: number;
  /** Pending side effects, awaited by tests and on shutdown. */
  track(work: Promise<unknown>): void;
  /** Token and reuse counters of /metrics. */
  metrics?: GrantMetrics;
}

const REUSE = 'refresh token already used';
const CODE_REUSE = new Set(['authorization code already consumed', 'device code already consumed']);

/** Grant revocations and refresh-token reuse (RFC 9700 §4.14.2) reach the deny list and alert. */
export function watchGrantEvents(provider: Provider, deps: GrantEventDeps): void {
  const { logger, audit, denyList, alerts } = deps;
  const denyUntil = () => Math.floor(Date.now() / 1000) + deps.accessTokenTtl + 60;

  async function onRefreshReuse(ctx: KoaContextWithOIDC) {
    const rt = ctx.oidc.entities.RefreshToken;
    const info = {
      client_id: rt?.clientId ?? ctx.oidc.client?.clientId,
      sub: rt?.accountId,
      grant_id: rt?.grantId,
    };
    logger.error(
      { event: 'refresh_token_reuse', ...info, ip: ctx.ip },
      'refresh token reuse detected: grant revoked',
    );
    const work: Promise<unknown>[] = [
      audit.record({
        kind: 'refresh_token_reuse',
        clientId: info.client_id,
        subject: info.sub,
        grantId: info.grant_id,
        detail: { ip: ctx.ip, user_agent: ctx.get('user-agent') || undefined },
      }),
      alerts.send({ event: 'refresh_token_reuse', ...info, at: new Date().toISOString() }),
    ];
    if (info.grant_id) work.push(denyList.denyGrant(info.grant_id, denyUntil()));
    await Promise.all(work);
  }

  provider.on('grant.error', (ctx: KoaContextWithOIDC, error: { error_detail?: string }) => {
    const description = error.error_detail ?? '';
    if (description === REUSE) {
      deps.metrics?.refreshReuse();
      deps.track(
        onRefreshReuse(ctx).catch((e: unknown) => logger.error({ err: e }, 'reuse alert failed')),
      );
    } else if (CODE_REUSE.has(description)) {
      logger.warn(
        { event: 'code_reuse', client_id: ctx.oidc.client?.clientId, ip: ctx.ip },
        description,
      );
    }
  });

  provider.on('grant.revoked', (_ctx: KoaContextWithOIDC, grantId: string) => {
    logger.info({ event: 'grant_revoked', grant_id: grantId }, 'grant revoked');
    deps.track(
      denyList
        .denyGrant(grantId, denyUntil())
        .catch((e: unknown) =>
          logger.error({ err: e, grant_id: grantId }, 'deny-list write failed'),
        ),
    );
  });

  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    deps.metrics?.tokenIssued(String(ctx.oidc.params?.['grant_type'] ?? ''));
  });

  provider.on('server_error', (ctx: KoaContextWithOIDC, error: Error) => {
    if (isUnavailable(error)) {
      // An outage, not a bug: answered 503 (unavailable.ts), logged once per request at warn.
      markUnavailable(ctx as never);
      logger.warn({ err: error, path: ctx.path }, 'dependency unavailable');
      return;
    }
    logger.error({ err: error, path: ctx.path }, 'authorization server error');
  });
}
