import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { parseApiConfig, startApiServer, type ApiConfig, type ApiDeps } from '../../src/index.js';
import { startTestIssuer, type TestIssuer, type TokenOptions } from './issuer.js';

// Tests assert on response bodies field by field; typing each one would add nothing.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface Reply<T = Json> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (for malformed JSON and content-type tests). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface TestApi {
  url: string;
  config: ApiConfig;
  database: TestDatabase;
  issuer: TestIssuer;
  request<T = Json>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
  /** A token for a subject with the given roles (scope `api` unless overridden). */
  token(sub: string, roles: string[], options?: Partial<TokenOptions>): Promise<string>;
  close(): Promise<void>;
}

/**
 * The API on port 0 against a fresh database of its own, trusting the test issuer.
 * Later: start the real auth server here instead and keep this interface.
 */
export async function startTestApi(
  options: { env?: Record<string, string>; deps?: Partial<ApiDeps> } = {},
): Promise<TestApi> {
  const issuer = await startTestIssuer();
  const database = await createTestDatabase();
  const config = parseApiConfig({
    NODE_ENV: 'test',
    API_PORT: '0',
    ISSUER: issuer.issuer,
    API_AUDIENCE: issuer.audience,
    JWKS_URL: issuer.jwksUrl,
    ...options.env,
  });
  const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const server = await startApiServer(config, { db: database.db, logger, ...options.deps });

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers['authorization'] = `Bearer ${o.token}`;
    let body: string | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(server.url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if (text && res.headers.get('content-type')?.includes('json')) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: text ? parsed : null, text };
  }

  return {
    url: server.url,
    config,
    database,
    issuer,
    request,
    token: (sub, roles, extra = {}) => issuer.tokenFor({ sub, roles, ...extra }),
    async close() {
      await server.close();
      await database.close();
      await issuer.close();
    },
  };
}
