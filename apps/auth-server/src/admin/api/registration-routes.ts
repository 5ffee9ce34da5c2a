import type Router from '@koa/router';
import { z } from 'zod';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { AgentClientSettings } from '../../kernel/agent-settings.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import { issueRegistrationToken } from '../../oauth/registration.js';
import { AdminError } from './errors.js';
import { parse } from './parse.js';

const tokenRequest = z.strictObject({
  /** Seconds; default REGISTRATION_TOKEN_TTL. */
  ttl: z
    .number()
    .int()
    .min(60)
    .max(365 * 86_400)
    .optional(),
});

/** POST /admin/registration-tokens: an RFC 7591 initial access token (README "Dynamic client registration"). */
export function registrationRoutes(
  router: Router,
  deps: {
    host: ProviderHost;
    audit: AuditRepo;
    registration?: AgentClientSettings['registration'] | undefined;
  },
): void {
  router.post('/admin/registration-tokens', async function createRegistrationToken(ctx) {
    const { ttl } = parse(tokenRequest, ctx.request.body);
    const settings = deps.registration;
    if (!settings || settings.mode === 'off') {
      throw new AdminError('conflict', 'registration is off: set REGISTRATION=token or open');
    }
    const issued = await issueRegistrationToken(deps.host.current, ttl ?? settings.tokenTtl);
    await deps.audit.record({
      kind: 'registration_token_issued',
      detail: { expires_at: issued.expiresAt.toISOString() },
    });
    ctx.status = 201;
    ctx.body = {
      initial_access_token: issued.token,
      expires_at: issued.expiresAt.toISOString(),
    };
  });
}
