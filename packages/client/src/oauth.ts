// PKCE (S256 only: the server refuses plain), token grants and the device flow; Node 24 and browsers.
import type { DpopKey } from './dpop.js';
import { base64url } from './encoding.js';
import { OAuthError, PortcullisError, TimeoutError, NetworkError } from './errors.js';
import { sleep as defaultSleep } from './retry.js';
import type { Sleep } from './retry.js';

/** Endpoints of a Portcullis authorization server (its discovery document names the same). */
export interface PortcullisEndpoints {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  deviceAuthorizationEndpoint: string;
  revocationEndpoint: string;
  userinfoEndpoint: string;
  jwksUri: string;
  /** RFC 9126 pushed authorization requests. */
  pushedAuthorizationRequestEndpoint: string;
}

/** Derives the endpoint URLs from the server's base address ({auth_url}). */
export function portcullisEndpoints(authUrl: string): PortcullisEndpoints {
  const base = authUrl.replace(/\/+$/, '');
  return {
    authorizationEndpoint: `${base}/authorize`,
    tokenEndpoint: `${base}/token`,
    deviceAuthorizationEndpoint: `${base}/device/auth`,
    revocationEndpoint: `${base}/token/revocation`,
    userinfoEndpoint: `${base}/me`,
    jwksUri: `${base}/.well-known/jwks.json`,
    pushedAuthorizationRequestEndpoint: `${base}/request`,
  };
}

export { base64url };

/** A PKCE verifier and its S256 challenge. */
export interface PkcePair {
  codeVerifier: string;
  codeChallenge: string;
  codeChallengeMethod: 'S256';
}

function randomToken(byteLength: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** 32 random bytes as the verifier (RFC 7636 §4.1); challenge = base64url(SHA-256(verifier)). */
export async function createPkcePair(): Promise<PkcePair> {
  const codeVerifier = randomToken(32);
  return { codeVerifier, codeChallenge: await s256(codeVerifier), codeChallengeMethod: 'S256' };
}

export async function s256(codeVerifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier));
  return base64url(new Uint8Array(digest));
}

/** Random `state` (CSRF protection, RFC 6749 §10.12): 32 bytes, base64url. */
export function createState(): string {
  return randomToken(32);
}

export interface AuthorizeUrlParams {
  /** Base address of the authorization server ({auth_url}); `/authorize` is appended. */
  authUrl: string;
  clientId: string;
  redirectUri: string;
  /** Space-separated, e.g. `openid profile email offline_access`. */
  scope: string;
  state: string;
  codeChallenge: string;
  nonce?: string;
  /** RFC 8707 resource indicator, e.g. the API audience. */
  resource?: string;
  /** RFC 9396 details the user approves, e.g. one payment (README "Payment authorization details"). */
  authorizationDetails?: readonly AuthorizationDetail[];
  /** Any further parameters (prompt, login_hint, …). */
  extra?: Record<string, string>;
}

/** One RFC 9396 authorization detail: `type` says what the other members mean. */
export interface AuthorizationDetail {
  type: string;
  [member: string]: unknown;
}

/** The parameters of an authorization request, as /authorize or the PAR endpoint takes them. */
function authorizeParams(params: AuthorizeUrlParams): Record<string, string | undefined> {
  return {
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    scope: params.scope,
    state: params.state,
    code_challenge: params.codeChallenge,
    code_challenge_method: 'S256',
    nonce: params.nonce,
    resource: params.resource,
    authorization_details: params.authorizationDetails
      ? JSON.stringify(params.authorizationDetails)
      : undefined,
    ...params.extra,
  };
}

/** Builds the /authorize URL of the authorization-code + PKCE flow. */
export function buildAuthorizeUrl(params: AuthorizeUrlParams): string {
  const url = new URL(portcullisEndpoints(params.authUrl).authorizationEndpoint);
  for (const [name, value] of Object.entries(authorizeParams(params))) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.toString();
}

/** A pushed request (RFC 9126): its `request_uri`, and the /authorize URL that uses it. */
export interface PushedAuthorizationRequest {
  requestUri: string;
  /** Seconds the request_uri is valid (once). */
  expiresIn: number;
  /** Where to send the browser: /authorize with client_id and request_uri only. */
  url: string;
}

/** Pushes the authorization request to `{auth}/request` (confidential clients authenticate). */
export async function pushAuthorizationRequest(
  params: AuthorizeUrlParams &
    Pick<TokenEndpointOptions, 'clientSecret' | 'fetch' | 'timeoutMs' | 'signal'>,
): Promise<PushedAuthorizationRequest> {
  const endpoints = portcullisEndpoints(params.authUrl);
  const body = await postForm(
    params,
    endpoints.pushedAuthorizationRequestEndpoint,
    authorizeParams(params),
  );
  if (typeof body.request_uri !== 'string') {
    throw new PortcullisError('oauth', 'pushed authorization response without request_uri');
  }
  const url = new URL(endpoints.authorizationEndpoint);
  url.searchParams.set('client_id', params.clientId);
  url.searchParams.set('request_uri', body.request_uri);
  return {
    requestUri: body.request_uri,
    expiresIn: typeof body.expires_in === 'number' ? body.expires_in : 60,
    url: url.toString(),
  };
}

/** Token endpoint answer (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in?: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
  /** RFC 9396: the details the token carries (a payment's with its `authorizationId`). */
  authorization_details?: AuthorizationDetail[];
  [extra: string]: unknown;
}

/** Settings shared by every call to a token endpoint. */
export interface TokenEndpointOptions {
  tokenUrl: string;
  clientId: string;
  /** Confidential clients: sent with client_secret_basic. Public clients omit it. */
  clientSecret?: string;
  /** RFC 8707 resource indicator (the API audience). */
  resource?: string;
  /** DPoP key binding the tokens (use the same key throughout), or a proof made elsewhere, sent as is. */
  dpop?: DpopKey | string;
  fetch?: typeof fetch;
  /** Default 15000. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Exchanges an authorization code (with its PKCE verifier) for tokens. */
export function exchangeCode(
  options: TokenEndpointOptions & { code: string; redirectUri: string; codeVerifier: string },
): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'authorization_code',
    code: options.code,
    redirect_uri: options.redirectUri,
    code_verifier: options.codeVerifier,
  });
}

/** Uses a refresh token; the server rotates it, so store the returned one. */
export function refreshToken(
  options: TokenEndpointOptions & { refreshToken: string; scope?: string },
): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'refresh_token',
    refresh_token: options.refreshToken,
    scope: options.scope,
  });
}

/** Client credentials grant for machine clients (client_secret_basic). */
export function clientCredentials(
  options: TokenEndpointOptions & { clientSecret: string; scope?: string },
): Promise<TokenResponse> {
  return tokenRequest(options, { grant_type: 'client_credentials', scope: options.scope });
}

/** RFC 8693 token type of an access token (subject_token_type, issued_token_type). */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** RFC 8693 token exchange: a user's access token -> a token for `resource`, naming this client as `act`. */
export function exchangeToken(
  options: TokenEndpointOptions & {
    clientSecret: string;
    subjectToken: string;
    /** The target resource server's URL (required: the token is for it). */
    resource: string;
    /** The same or fewer scopes than the subject token's; default: all it may pass on. */
    scope?: string;
  },
): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: options.subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    scope: options.scope,
  });
}

/** Device authorization response (RFC 8628 §3.2). */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  /** Seconds between polls; 5 when absent. */
  interval?: number;
}

/** Starts the device flow at `{auth}/device/auth`. */
export async function deviceAuthorization(
  options: Omit<TokenEndpointOptions, 'tokenUrl' | 'dpop'> & {
    deviceAuthorizationUrl: string;
    scope?: string;
  },
): Promise<DeviceAuthorizationResponse> {
  return (await postForm(options, options.deviceAuthorizationUrl, {
    scope: options.scope,
  })) as unknown as DeviceAuthorizationResponse;
}

/** Options of {@link pollDeviceToken}. */
export interface PollDeviceTokenOptions extends TokenEndpointOptions {
  deviceCode: string;
  /** Seconds between polls, from the device authorization response. Default 5. */
  interval?: number;
  /** Seconds until the device code expires; polling stops then. */
  expiresIn?: number;
  /** Injectable sleep, for tests. */
  sleep?: Sleep;
  now?: () => number;
}

/** Polls until the user approves (RFC 8628 §3.4–3.5); `slow_down` adds 5 s, a refusal throws OAuthError. */
export async function pollDeviceToken(options: PollDeviceTokenOptions): Promise<TokenResponse> {
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const deadline = options.expiresIn === undefined ? Infinity : now() + options.expiresIn * 1000;
  let intervalMs = (options.interval ?? 5) * 1000;
  for (;;) {
    await sleep(intervalMs, options.signal);
    if (now() >= deadline)
      throw new OAuthError(400, 'expired_token', 'device code expired before approval');
    try {
      return await tokenRequest(options, {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: options.deviceCode,
      });
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      if (err.error === 'authorization_pending') continue;
      if (err.error === 'slow_down') {
        intervalMs += 5000;
        continue;
      }
      throw err;
    }
  }
}

async function tokenRequest(
  options: TokenEndpointOptions,
  params: Record<string, string | undefined>,
): Promise<TokenResponse> {
  const body = await postForm(options, options.tokenUrl, params, options.dpop);
  if (typeof body.access_token !== 'string') {
    throw new PortcullisError('oauth', 'token response without access_token');
  }
  return body as TokenResponse;
}

/** client_secret_basic (RFC 6749 §2.3.1): id and secret form-encoded, then Basic. */
function basicAuth(clientId: string, clientSecret: string): string {
  const encode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
  const bytes = new TextEncoder().encode(`${encode(clientId)}:${encode(clientSecret)}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** POSTs the form; with a DPoP key, one retry with a new `use_dpop_nonce` nonce (RFC 9449 §8). */
async function postForm(
  options: Omit<TokenEndpointOptions, 'tokenUrl' | 'dpop'>,
  url: string,
  params: Record<string, string | undefined>,
  dpop?: DpopKey | string,
): Promise<Record<string, unknown>> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...params, resource: options.resource })) {
    if (value !== undefined) form.set(name, value);
  }
  for (let attempt = 0; ; attempt++) {
    const headers = new Headers({ Accept: 'application/json' });
    if (options.clientSecret !== undefined)
      headers.set('Authorization', basicAuth(options.clientId, options.clientSecret));
    else form.set('client_id', options.clientId);
    if (typeof dpop === 'string') headers.set('DPoP', dpop);
    else if (dpop) headers.set('DPoP', await dpop.proof('POST', url));

    const answer = await send(options, url, headers, form);
    const newNonce = typeof dpop === 'object' && dpop.updateNonce(url, answer.headers);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(answer.text) as Record<string, unknown>;
    } catch {
      throw new OAuthError(answer.status, 'invalid_response', `non-JSON answer from ${url}`);
    }
    if (answer.status >= 200 && answer.status <= 299) return body;
    const error = typeof body.error === 'string' ? body.error : `http_${answer.status}`;
    if (error === 'use_dpop_nonce' && newNonce && attempt === 0) continue;
    const description =
      typeof body.error_description === 'string' ? body.error_description : undefined;
    const dpopNonce = answer.headers.get('DPoP-Nonce') ?? undefined;
    throw new OAuthError(answer.status, error, description, dpopNonce ? { dpopNonce } : {});
  }
}

/** One POST under the timeout; network failures and timeouts become typed errors. */
async function send(
  options: Pick<TokenEndpointOptions, 'fetch' | 'timeoutMs' | 'signal'>,
  url: string,
  headers: Headers,
  form: URLSearchParams,
): Promise<{ status: number; text: string; headers: Headers }> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const response = await (options.fetch ?? fetch)(url, {
      method: 'POST',
      headers,
      body: form,
      signal,
    });
    return { status: response.status, text: await response.text(), headers: response.headers };
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout.aborted) throw new TimeoutError(timeoutMs, { cause: err });
    throw new NetworkError(`POST ${url} failed: ${(err as Error).message}`, { cause: err });
  }
}
