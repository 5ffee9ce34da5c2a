import type { Middleware } from 'koa';
import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { noticeOfRevocation } from '../auth/credentials.js';
import { SESSION_COOKIE } from '../auth/session-resolver.js';
import { SECRET_BODY } from '../auth/secrets.js';
import type { ApiConfig } from '../config.js';
import { sessionId } from '../data/sessions-repo.js';
import { awaitsVerification } from '@portcullis/accounts';
import {
  EmailUnverifiedError,
  ForbiddenError,
  InvalidCredentialsError,
  SecondFactorRequiredError,
} from '../errors.js';
import { parseBody } from '../http/validate.js';
import { principalOf, type ApiState } from '../middleware/authenticate.js';
import { clientIp } from '../middleware/client-ip.js';
import { beginLoginAttempt } from '../middleware/rate-limit.js';
import type { ApiRouter } from '../openapi/define-route.js';
import { ErrorSchema, ValidationErrorSchema } from '../schemas/common.js';
import { LoginBody, LoginResponse } from '../schemas/credentials.js';
import type { RouteDeps } from './deps.js';

const tags = ['sessions'];
const FORM = 'application/x-www-form-urlencoded';
const error = (description: string): ResponseConfig => ({
  description,
  content: { 'application/json': { schema: ErrorSchema } },
});

// Set by hand: Koa's cookie jar refuses Secure on a plain-HTTP hop (behind a TLS proxy).
function sessionCookie(value: string, maxAgeSec: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAgeSec}; HttpOnly; Secure; SameSite=Strict`;
}
const CLEARED = `${SESSION_COOKIE}=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict`;

/** Browser sessions (docs/api-contracts.md, "Credentials"): POST /login, /logout, /logout/all. */
export function sessionRoutes(api: ApiRouter, deps: RouteDeps, config: ApiConfig): void {
  const { accounts, sessions } = deps.repos;
  const credentials = () => {
    if (!deps.credentials) throw new Error('RouteDeps.credentials is required for session routes');
    return deps.credentials;
  };
  const { idleTimeoutSec, absoluteTimeoutSec, logoutAllTtlSec } = config.sessions;
  const idleSince = (now: Date) => new Date(now.getTime() - idleTimeoutSec * 1000);
  /** Ends the open session of `sid`, then (once committed) tells every instance (streams end). */
  async function endSession(sid: string | undefined, now: Date): Promise<void> {
    if (sid === undefined || !SECRET_BODY.test(sid) || !(await sessions.revoke(sid, now))) return;
    await noticeOfRevocation(credentials().revocations, sessionId(sid), now);
  }

  api.registry.registerPath({
    method: 'post',
    path: '/login',
    operationId: 'login',
    summary: 'Start a browser session (sets the sid cookie)',
    tags,
    security: [],
    request: {
      body: {
        required: true,
        content: { 'application/json': { schema: LoginBody }, [FORM]: { schema: LoginBody } },
      },
    },
    responses: {
      200: {
        description: 'Signed in; `Set-Cookie: sid=…; HttpOnly; Secure; SameSite=Strict; Path=/`',
        content: { 'application/json': { schema: LoginResponse } },
      },
      401: error(
        'Wrong email or password (`invalid_credentials`), or the account has a second factor and signs in at the auth server (`second_factor_required`)',
      ),
      403: error(
        'A foreign Origin (`forbidden_origin`), or the right password of an address not yet verified (`email_unverified`)',
      ),
      422: {
        description: 'Validation failed',
        content: { 'application/json': { schema: ValidationErrorSchema } },
      },
      429: error('Too many failed logins for this IP or account; see Retry-After'),
      503: error('Rate limits cannot be checked (fails closed); see Retry-After'),
    },
  });
  api.router.post('/login', async function login(ctx) {
    const { email, password } = parseBody(LoginBody, ctx.request.body);
    const attempt = await beginLoginAttempt(
      credentials().limiters,
      clientIp(ctx, config.trustProxy),
      email,
    );
    const user = await accounts.verifyCredentials(email, password);
    if (!user) throw new InvalidCredentialsError();
    await attempt.succeeded();
    // After the password: only its holder learns that the address awaits its link.
    if (awaitsVerification(user, config.signupVerify)) throw new EmailUnverifiedError();
    if (user.secondFactor) throw new SecondFactorRequiredError();
    const now = deps.clock();
    // No fixation: a sid the browser already holds is ended, never adopted.
    await endSession(ctx.cookies.get(SESSION_COOKIE), now);
    await sessions.purgeEnded(user.id, now, idleSince(now));
    const expiresAt = new Date(now.getTime() + absoluteTimeoutSec * 1000);
    const sid = await sessions.create({
      userId: user.id,
      userAgent: ctx.get('User-Agent'),
      now,
      expiresAt,
    });
    ctx.append('Set-Cookie', sessionCookie(sid, absoluteTimeoutSec));
    ctx.body = { user: { id: user.id, email: user.email, roles: user.roles } };
  });

  api.registry.registerPath({
    method: 'post',
    path: '/logout',
    operationId: 'logout',
    summary: 'End this browser session (idempotent; clears the sid cookie)',
    tags,
    security: [{ sessionCookie: [] }],
    responses: {
      204: { description: 'Signed out' },
      403: error('A foreign Origin (`forbidden_origin`)'),
    },
  });
  api.router.post('/logout', async function logout(ctx) {
    await endSession(ctx.cookies.get(SESSION_COOKIE), deps.clock());
    ctx.append('Set-Cookie', CLEARED);
    ctx.status = 204;
  });

  api.registry.registerPath({
    method: 'post',
    path: '/logout/all',
    operationId: 'logoutEverywhere',
    summary: 'End every session and access token of the calling user, at once',
    tags,
    security: [{ sessionCookie: [] }, { bearerJwt: [] }],
    responses: {
      204: { description: 'Every session ended; access tokens issued until now are denied' },
      401: error('Not signed in'),
      403: error('API keys and client credentials cannot log a user out (`forbidden`)'),
    },
  });
  const logoutEverywhere: Middleware<ApiState> = async function logoutEverywhere(ctx) {
    const principal = principalOf(ctx);
    // A key or a machine client must not be able to sign its human owner out.
    if (principal.kind !== 'user')
      throw new ForbiddenError('logout/all needs a user session or user token');
    const now = deps.clock();
    await sessions.revokeAllForUser(principal.subject, now);
    // To the millisecond (docs/security.md#logout-everywhere-to-the-millisecond).
    const nowSec = now.getTime() / 1000;
    await credentials().revocations.denySubject(
      principal.subject,
      nowSec,
      Math.ceil(nowSec) + logoutAllTtlSec,
    );
    ctx.append('Set-Cookie', CLEARED);
    ctx.status = 204;
  };
  api.router.post('/logout/all', api.authenticate, logoutEverywhere);
}
