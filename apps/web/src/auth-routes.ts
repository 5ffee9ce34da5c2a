import { constantTimeEqual } from '@portcullis/observability';
import type Router from '@koa/router';
import {
  buildAuthorizeUrl,
  createPkcePair,
  createState,
  exchangeCode,
  OAuthError,
  portcullisEndpoints,
  refreshToken,
  type TokenResponse,
} from '@portcullis/client';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { WebConfig } from './config.js';
import { clearCookie, PKCE_COOKIE, REFRESH_COOKIE, setCookie, SIGNIN_COOKIE } from './cookies.js';
import { requireSameOriginFetch } from './csrf.js';
import { idTokenUser, type SignedInUser } from './id-token.js';
import type { RefreshCoordinator } from './refresh-coordinator.js';
import type { CookieSealer } from './sealed-cookie.js';

export interface AuthRouteDeps {
  logger: Logger;
  sealer: CookieSealer;
  refreshes: RefreshCoordinator<Rotation>;
  fetch?: typeof fetch;
}

export interface Rotation {
  accessToken: string;
  expiresIn: number;
  refreshToken: string;
  user: SignedInUser | undefined;
}

interface PendingSignIn {
  state: string;
  verifier: string;
  nonce: string;
}

interface PendingExchange {
  code: string;
  verifier: string;
  nonce: string;
}

const PKCE_TTL = 10 * 60;
/** The authorization server's codes live 60 s (oidc-provider ttl.AuthorizationCode). */
const SIGNIN_TTL = 60;
/** Token endpoint refusals about the proof: the page fixes its proof, the session stays. */
const PROOF_ERRORS = new Set(['use_dpop_nonce', 'invalid_dpop_proof']);
/** The authorization server keeps refresh tokens 30 days (REFRESH_TOKEN_TTL); the cookie matches. */
const REFRESH_COOKIE_TTL = 30 * 24 * 60 * 60;
/** Sign-in errors the SPA explains; anything else becomes `sign_in_failed`. */
const CALLBACK_ERRORS = new Set([
  'access_denied',
  'login_required',
  'consent_required',
  'interaction_required',
]);

function isPendingSignIn(value: unknown): value is PendingSignIn {
  const v = value as Partial<PendingSignIn> | undefined;
  return (
    typeof v?.state === 'string' && typeof v.verifier === 'string' && typeof v.nonce === 'string'
  );
}

function isPendingExchange(value: unknown): value is PendingExchange {
  const v = value as Partial<PendingExchange> | undefined;
  return (
    typeof v?.code === 'string' && typeof v.verifier === 'string' && typeof v.nonce === 'string'
  );
}

/** Answers a refusal of the page's proof: 400, with the server's nonce for the retry. */
function proofRefused(ctx: Context, error: string, nonce?: string) {
  if (nonce) ctx.set('DPoP-Nonce', nonce);
  ctx.status = 400;
  ctx.body = { error };
}

/** A space-separated list of acr values (RFC 6749 §3.3 scope-token characters). */
const ACR_VALUES = /^[\x21\x23-\x5b\x5d-\x7e]{1,200}( [\x21\x23-\x5b\x5d-\x7e]{1,200}){0,4}$/;

/** What the page may ask of a sign-in (`prompt`, step-up `acr_values`/`max_age`); the rest dropped. */
function signInRequest(query: Context['query']): Record<string, string> {
  const extra: Record<string, string> = {};
  const { prompt, acr_values: acrValues, max_age: maxAge } = query;
  if (prompt === 'login') extra['prompt'] = 'login';
  if (typeof acrValues === 'string' && ACR_VALUES.test(acrValues)) extra['acr_values'] = acrValues;
  if (typeof maxAge === 'string' && /^\d{1,9}$/.test(maxAge))
    extra['max_age'] = String(Number(maxAge));
  return extra;
}

function noStore(ctx: Context) {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

/** The BFF half of sign-in: code + PKCE, the page's DPoP proofs (apps/web/README.md#routes). */
export function authRoutes(router: Router, config: WebConfig, deps: AuthRouteDeps): void {
  const { logger, sealer, refreshes } = deps;
  const endpoints = portcullisEndpoints(config.issuer);
  const tokenOptions = {
    tokenUrl: endpoints.tokenEndpoint,
    clientId: config.clientId,
    resource: config.apiAudience,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  };
  const sameOrigin = requireSameOriginFetch(config.origin);

  router.get('/auth/login', async function startSignIn(ctx) {
    const pkce = await createPkcePair();
    const pending: PendingSignIn = {
      state: createState(),
      verifier: pkce.codeVerifier,
      nonce: createState(),
    };
    setCookie(ctx, PKCE_COOKIE, sealer.seal(PKCE_COOKIE.name, pending, PKCE_TTL), PKCE_TTL);
    const extra = signInRequest(ctx.query);
    noStore(ctx);
    ctx.status = 303;
    ctx.redirect(
      buildAuthorizeUrl({
        authUrl: config.issuer,
        clientId: config.clientId,
        redirectUri: config.redirectUri,
        scope: config.scope,
        state: pending.state,
        codeChallenge: pkce.codeChallenge,
        nonce: pending.nonce,
        resource: config.apiAudience,
        extra,
      }),
    );
  });

  router.get('/callback', async function finishSignIn(ctx) {
    noStore(ctx);
    const fail = (error: string) => {
      ctx.status = 303;
      ctx.redirect(`/?error=${encodeURIComponent(error)}`);
    };
    const pending = sealer.open(PKCE_COOKIE.name, ctx.cookies.get(PKCE_COOKIE.name));
    // One sign-in, one callback: the verifier is forgotten whatever happens next.
    clearCookie(ctx, PKCE_COOKIE);
    const q = ctx.query;
    const param = (name: string) => (typeof q[name] === 'string' ? q[name] : undefined);
    if (!isPendingSignIn(pending)) return fail('sign_in_expired');
    if (!constantTimeEqual(pending.state, param('state'))) return fail('state_mismatch');
    // RFC 9207: the server names itself in the response (mix-up defence).
    const iss = param('iss');
    if (iss !== undefined && iss !== config.issuer) return fail('issuer_mismatch');
    const error = param('error');
    if (error !== undefined) return fail(CALLBACK_ERRORS.has(error) ? error : 'sign_in_failed');
    const code = param('code');
    if (!code) return fail('sign_in_failed');

    const waiting: PendingExchange = { code, verifier: pending.verifier, nonce: pending.nonce };
    setCookie(ctx, SIGNIN_COOKIE, sealer.seal(SIGNIN_COOKIE.name, waiting, SIGNIN_TTL), SIGNIN_TTL);
    ctx.status = 303;
    ctx.redirect('/');
  });

  async function exchange(pending: PendingExchange, proof: string): Promise<Rotation> {
    const tokens: TokenResponse = await exchangeCode({
      ...tokenOptions,
      code: pending.code,
      redirectUri: config.redirectUri,
      codeVerifier: pending.verifier,
      dpop: proof,
    });
    const user = idTokenUser(tokens.id_token, {
      issuer: config.issuer,
      clientId: config.clientId,
      nonce: pending.nonce,
    });
    if (!user || typeof tokens.refresh_token !== 'string') {
      logger.warn(
        { event: 'token_response_refused', idToken: Boolean(user) },
        'token response refused',
      );
      throw new Error('token response without a valid id_token or refresh_token');
    }
    return {
      accessToken: tokens.access_token,
      expiresIn: tokens.expires_in ?? 0,
      refreshToken: tokens.refresh_token,
      user,
    };
  }

  async function rotate(current: string, proof: string): Promise<Rotation> {
    const tokens = await refreshToken({ ...tokenOptions, refreshToken: current, dpop: proof });
    if (typeof tokens.refresh_token !== 'string')
      throw new Error('refresh response without refresh_token');
    return {
      accessToken: tokens.access_token,
      expiresIn: tokens.expires_in ?? 0,
      refreshToken: tokens.refresh_token,
      user: idTokenUser(tokens.id_token, { issuer: config.issuer, clientId: config.clientId }),
    };
  }

  async function finishExchange(ctx: Context, pending: PendingExchange, proof: string) {
    let rotation: Rotation;
    try {
      rotation = await exchange(pending, proof);
    } catch (err) {
      if (err instanceof OAuthError && PROOF_ERRORS.has(err.error))
        return proofRefused(ctx, err.error, err.dpopNonce);
      logger.warn({ err, event: 'code_exchange_failed' }, 'code exchange failed');
      clearCookie(ctx, SIGNIN_COOKIE);
      ctx.status = 401;
      ctx.body = { error: 'sign_in_failed' };
      return;
    }
    clearCookie(ctx, SIGNIN_COOKIE);
    answerRotation(ctx, rotation);
  }

  function answerRotation(ctx: Context, rotation: Rotation) {
    setCookie(
      ctx,
      REFRESH_COOKIE,
      sealer.seal(REFRESH_COOKIE.name, rotation.refreshToken, REFRESH_COOKIE_TTL),
      REFRESH_COOKIE_TTL,
    );
    ctx.body = {
      access_token: rotation.accessToken,
      token_type: 'DPoP',
      expires_in: rotation.expiresIn,
      ...(rotation.user ? { user: rotation.user } : {}),
    };
  }

  router.post('/auth/refresh', sameOrigin, async function refreshSession(ctx) {
    noStore(ctx);
    const proof = ctx.get('DPoP');
    if (!proof) return proofRefused(ctx, 'invalid_dpop_proof');
    const pending = sealer.open(SIGNIN_COOKIE.name, ctx.cookies.get(SIGNIN_COOKIE.name));
    if (isPendingExchange(pending)) return finishExchange(ctx, pending, proof);
    const current = sealer.open(REFRESH_COOKIE.name, ctx.cookies.get(REFRESH_COOKIE.name));
    if (typeof current !== 'string') {
      if (ctx.cookies.get(REFRESH_COOKIE.name) !== undefined) clearCookie(ctx, REFRESH_COOKIE);
      ctx.status = 401;
      ctx.body = { error: 'not_signed_in' };
      return;
    }
    let rotation: Rotation;
    try {
      rotation = await refreshes.run(current, () => rotate(current, proof));
    } catch (err) {
      if (err instanceof OAuthError && PROOF_ERRORS.has(err.error))
        return proofRefused(ctx, err.error, err.dpopNonce);
      if (err instanceof OAuthError && err.status >= 400 && err.status < 500) {
        // invalid_grant: expired, revoked, or the grant was revoked for reuse. Sign in again.
        logger.info({ event: 'refresh_refused', error: err.error }, 'refresh refused');
        clearCookie(ctx, REFRESH_COOKIE);
        ctx.status = 401;
        ctx.body = { error: 'session_expired' };
        return;
      }
      logger.error({ err }, 'refresh failed');
      ctx.status = 502;
      ctx.set('Retry-After', '2');
      ctx.body = { error: 'auth_server_unavailable' };
      return;
    }
    answerRotation(ctx, rotation);
  });

  router.post('/auth/logout', sameOrigin, async function signOut(ctx) {
    noStore(ctx);
    const current = sealer.open(REFRESH_COOKIE.name, ctx.cookies.get(REFRESH_COOKIE.name));
    clearCookie(ctx, REFRESH_COOKIE);
    ctx.status = 204;
    if (typeof current !== 'string') return;
    try {
      const res = await (deps.fetch ?? fetch)(endpoints.revocationEndpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({
          token: current,
          token_type_hint: 'refresh_token',
          client_id: config.clientId,
        }),
        signal: AbortSignal.timeout(5000),
      });
      if (!res.ok)
        logger.warn({ status: res.status, event: 'revocation_failed' }, 'revocation refused');
      await res.body?.cancel();
    } catch (err) {
      // The cookie is gone either way; the token expires on its own.
      logger.warn({ err, event: 'revocation_failed' }, 'revocation failed');
    }
  });
}
