// The one pipeline of every call: token, conditional GET, timeout, 401 refresh, retries (README "Behaviour").
import { cacheKey, tokenIdentity } from './etag-cache.js';
import type { EtagCache } from './etag-cache.js';
import {
  ApiError,
  NetworkError,
  PortcullisError,
  TimeoutError,
  StepUpRequiredError,
  UnauthorizedError,
} from './errors.js';
import { stepUpChallengeOf } from './step-up.js';
import type { RequestInfo } from './errors.js';
import { isUseDpopNonceChallenge, type DpopKey } from './dpop.js';
import { backoffDelay, parseRetryAfter } from './retry.js';
import type { ResolvedRetry } from './retry.js';
import type { TokenManager } from './tokens.js';

/** A query-string value; arrays repeat the parameter (`status=a&status=b`). */
export type QueryValue =
  string | number | boolean | Date | readonly (string | number)[] | null | undefined;
export type QueryParams = Record<string, QueryValue>;

/** Body types the client sends without transforming (all replayable on retry). */
export type RawBody = FormData | URLSearchParams | Blob | string;

export interface RequestOptions {
  method: string;
  /** Path below `baseUrl`, starting with `/`. */
  path: string;
  query?: QueryParams;
  /** Serialised as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** Sent as is; for FormData, fetch writes the multipart boundary itself. */
  body?: RawBody;
  headers?: Record<string, string>;
  /** Makes a non-idempotent request safe to retry; reused on every attempt. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Use the ETag cache (GET only). Default true. */
  cache?: boolean;
}

export interface HttpResponse<T> {
  status: number;
  headers: Headers;
  data: T;
  /** True when the body came from the ETag cache after a 304. */
  fromCache: boolean;
}

export interface HttpSettings {
  baseUrl: string;
  timeoutMs: number;
  retry: ResolvedRetry;
  fetch: typeof fetch;
  headers: Record<string, string>;
  credentials?: RequestInit['credentials'];
  cache: EtagCache | undefined;
  tokens: TokenManager;
  /** DPoP key: tokens go out as `Authorization: DPoP` with a proof per attempt. */
  dpop?: () => Promise<DpopKey>;
}

export interface Http {
  request<T>(options: RequestOptions): Promise<HttpResponse<T>>;
  url(path: string, query?: QueryParams): string;
  readonly settings: HttpSettings;
}

// RFC 9110 §9.2.2: repeating these has the same effect as sending them once.
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const RETRYABLE_5XX = new Set([500, 502, 503, 504]);

export function createHttp(settings: HttpSettings): Http {
  const base = settings.baseUrl.replace(/\/+$/, '');

  function url(path: string, query?: QueryParams): string {
    const target = new URL(base + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      const values = Array.isArray(value) ? value : [value];
      for (const v of values) {
        target.searchParams.append(name, v instanceof Date ? v.toISOString() : String(v));
      }
    }
    return target.toString();
  }

  async function request<T>(options: RequestOptions): Promise<HttpResponse<T>> {
    const method = options.method.toUpperCase();
    const target = url(options.path, options.query);
    const info: RequestInfo = { method, url: target, idempotencyKey: options.idempotencyKey };
    const retryable = IDEMPOTENT.has(method) || options.idempotencyKey !== undefined;
    const useCache = method === 'GET' && options.cache !== false && settings.cache !== undefined;
    const { retry } = settings;
    let refreshed = false;
    let nonceRetried = false;
    let retries = 0;

    try {
      for (;;) {
        const token = await settings.tokens.current();
        const headers = buildHeaders(options);
        await authorize(settings, headers, { method, url: target, token });
        const key = useCache ? cacheKey(tokenIdentity(token), target) : undefined;
        const cached = key ? settings.cache?.get(key) : undefined;
        if (cached) headers.set('If-None-Match', cached.etag);

        let response: Response;
        let body: unknown;
        try {
          ({ response, body } = await attempt(target, method, headers, options));
        } catch (err) {
          if (err instanceof NetworkError && retryable && retries < retry.maxRetries) {
            await retry.sleep(backoffDelay(retries++, retry), options.signal);
            continue;
          }
          throw err;
        }

        const { status } = response;
        if ((await useDpopNonce(settings, target, response)) && !nonceRetried) {
          nonceRetried = true;
          continue;
        }
        if (status === 304 && cached) {
          return { status, headers: response.headers, data: cached.body as T, fromCache: true };
        }
        if (response.ok) {
          const etag = response.headers.get('ETag');
          if (key && etag && status === 200) settings.cache?.set(key, { etag, body });
          if (method !== 'GET' && method !== 'HEAD') settings.cache?.invalidateUrl(target);
          return { status, headers: response.headers, data: body as T, fromCache: false };
        }
        if (status === 401) {
          await refreshOnceAfter401(settings, token, response, body, refreshed);
          refreshed = true;
          continue;
        }

        const retryAfterMs = parseRetryAfter(response.headers.get('Retry-After'));
        // 429 was refused before processing, safe to repeat; 5xx (or a 409 key still in flight) may have half-happened.
        const mayRetry =
          status === 429 ||
          (RETRYABLE_5XX.has(status) && retryable) ||
          (status === 409 && options.idempotencyKey !== undefined);
        // A Retry-After beyond the cap is not shortened: calling early would only be refused.
        const withinCap = retryAfterMs === undefined || retryAfterMs <= retry.maxDelayMs;
        if (mayRetry && withinCap && retries < retry.maxRetries) {
          await retry.sleep(
            Math.min(retry.maxDelayMs, nextDelay(retries, retryAfterMs, retry)),
            options.signal,
          );
          retries++;
          continue;
        }
        throw new ApiError(status, body, response.headers, { retryAfterMs });
      }
    } catch (err) {
      if (err instanceof PortcullisError) err.request ??= info;
      throw err;
    }
  }

  function buildHeaders(options: RequestOptions): Headers {
    const headers = new Headers(settings.headers);
    headers.set('Accept', 'application/json');
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    if (options.idempotencyKey) headers.set('Idempotency-Key', options.idempotencyKey);
    if (options.json !== undefined) headers.set('Content-Type', 'application/json');
    return headers;
  }

  async function attempt(
    target: string,
    method: string,
    headers: Headers,
    options: RequestOptions,
  ): Promise<{ response: Response; body: unknown }> {
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const response = await settings.fetch(target, {
        method,
        headers,
        body: options.json !== undefined ? JSON.stringify(options.json) : options.body,
        redirect: 'follow',
        credentials: settings.credentials,
        signal,
      });
      return { response, body: await decodeBody(response, method) };
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (timeout.aborted) throw new TimeoutError(settings.timeoutMs, { cause: err });
      if (err instanceof PortcullisError) throw err;
      throw new NetworkError(`${method} ${target} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  return { request, url, settings };
}

/** `Bearer <token>`, or `DPoP <token>` with a proof whose `ath` is the token's hash (RFC 9449 §7.1). */
export async function authorize(
  settings: Pick<HttpSettings, 'dpop'>,
  headers: Headers,
  request: { method: string; url: string; token: string | undefined },
): Promise<void> {
  const { token } = request;
  if (!token) return;
  if (!settings.dpop) {
    headers.set('Authorization', `Bearer ${token}`);
    return;
  }
  const key = await settings.dpop();
  headers.set('Authorization', `DPoP ${token}`);
  headers.set('DPoP', await key.proof(request.method, request.url, { accessToken: token }));
}

/** A step-up challenge is thrown (a refresh keeps the old sign-in); else one refresh, then thrown. */
export async function refreshOnceAfter401(
  settings: HttpSettings,
  token: string | undefined,
  response: Response,
  body: unknown,
  alreadyRefreshed: boolean,
): Promise<void> {
  const stepUp = stepUpChallengeOf(response.headers, body);
  if (stepUp) throw new StepUpRequiredError(body, response.headers, stepUp);
  if (alreadyRefreshed) throw new UnauthorizedError(body, response.headers);
  const outcome = await settings.tokens.refreshAfterRejection(token);
  if (!outcome.ok) throw new UnauthorizedError(body, response.headers, { cause: outcome.cause });
}

/** Keeps the `DPoP-Nonce`; true for a 401 asking for a new nonce, worth one retry (RFC 9449 §9). */
export async function useDpopNonce(
  settings: Pick<HttpSettings, 'dpop'>,
  url: string,
  response: Response,
): Promise<boolean> {
  if (!settings.dpop || !response.headers.has('DPoP-Nonce')) return false;
  const fresh = (await settings.dpop()).updateNonce(url, response.headers);
  return fresh && response.status === 401 && isUseDpopNonceChallenge(response.headers);
}

/** First wait honours Retry-After exactly; later ones add jittered exponential backoff on top. */
function nextDelay(
  retries: number,
  retryAfterMs: number | undefined,
  policy: ResolvedRetry,
): number {
  if (retryAfterMs === undefined) return backoffDelay(retries, policy);
  return retries === 0 ? retryAfterMs : retryAfterMs + backoffDelay(retries, policy);
}

async function decodeBody(response: Response, method: string): Promise<unknown> {
  if (method === 'HEAD' || response.status === 204 || response.status === 304) return undefined;
  const text = await response.text();
  if (text === '') return undefined;
  const type = response.headers.get('Content-Type') ?? '';
  if (!/[/+]json\b/i.test(type)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new PortcullisError('api', `invalid JSON in ${response.status} response`, { cause });
  }
}
