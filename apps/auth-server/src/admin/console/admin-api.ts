import { DependencyUnavailableError } from '../../kernel/unavailable.js';

/** One admin API answer: its status and JSON body (undefined for 204). */
export interface AdminAnswer<T = Record<string, unknown>> {
  status: number;
  ok: boolean;
  body: T;
}

/** The admin API's error body (admin/errors.ts). */
export interface AdminErrorBody {
  error?: string;
  message?: string;
  fields?: Record<string, string[]>;
}

/** The admin API as the console calls it: over HTTP, as the signed-in administrator. */
export interface AdminApi {
  get<T = Record<string, unknown>>(
    path: string,
    query?: Record<string, string | undefined>,
  ): Promise<AdminAnswer<T>>;
  send<T = Record<string, unknown>>(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<AdminAnswer<T>>;
}

/** The admin API no longer takes this session's token (401) or its user (403): the session ends. */
export class ConsoleSessionRefused extends Error {
  constructor(readonly status: 401 | 403) {
    super(`the admin API answered ${status} to the console's token`);
  }
}

/** Ten seconds: an admin request, or a code exchange, is a database write or two. */
const TIMEOUT_MS = 10_000;

/**
 * One call to a server the console depends on (the admin API, its own token endpoint). No
 * answer in time, a 5xx, or a body that is not JSON means that server is unavailable: a 503
 * page with Retry-After, as for the database, never a 500.
 */
export async function callDependency<T>(
  name: string,
  url: string,
  init: RequestInit,
): Promise<AdminAnswer<T>> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const text = await response.text();
    if (response.status >= 500) throw new Error(`answered ${response.status}`);
    return {
      status: response.status,
      ok: response.ok,
      body: (text ? JSON.parse(text) : undefined) as T,
    };
  } catch (error) {
    throw new DependencyUnavailableError(name, error);
  }
}

/** Every console action goes through here: the same admin API as the CLI's, no second path. */
export function createAdminApi(baseUrl: () => string, accessToken: string): AdminApi {
  async function call<T>(method: string, path: string, body?: unknown): Promise<AdminAnswer<T>> {
    const answer = await callDependency<T>('admin API', `${baseUrl()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${accessToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // Expired, revoked, or no longer an administrator: no page should render on that.
    if (answer.status === 401 || answer.status === 403) {
      const code = (answer.body as AdminErrorBody | undefined)?.error;
      if (code === 'invalid_token' || code === 'unauthenticated' || code === 'forbidden') {
        throw new ConsoleSessionRefused(answer.status);
      }
      return { status: answer.status, ok: false, body: { error: code } as T };
    }
    return answer;
  }
  return {
    get(path, query = {}) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
      const search = params.size > 0 ? `?${params}` : '';
      return call('GET', `${path}${search}`);
    },
    send: (method, path, body) => call(method, path, body),
  };
}

/** `encodeURIComponent` for a path segment of the admin API. */
export const seg = (value: string) => encodeURIComponent(value);
