/**
 * The API under test, over HTTP on port 0 with a fresh database of its own.
 *
 * By default the REAL authorization server runs beside it on the same database
 * (helpers/auth-server.ts) and every token is one it issued: `api.token(label, roles)`
 * signs a stored user in through Authorization Code + PKCE, `api.clientToken(roles)`
 * uses client credentials. `startTestApi({ issuer: 'test' })` swaps in the TEST ISSUER
 * (@portcullis/testing) for the few tests about tokens the real server never issues.
 */
import { pino, type Logger } from 'pino';
import type { RunningAuthServer } from '@portcullis/auth-server';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import {
  parseApiConfig,
  startApiServer,
  type ApiConfig,
  type ApiDeps,
  type RunningApiServer,
} from '../../src/index.js';
import {
  startRealIssuer,
  type RealIssuer,
  type TestUser,
  type TokenRequest,
} from './auth-server.js';
import { PASSWORD } from './factories.js';
import {
  startTestIssuer,
  TEST_API_AUDIENCE,
  type TestIssuer,
  type TokenOptions,
} from '@portcullis/testing';

export type { TestUser, TokenRequest } from './auth-server.js';

// Tests assert on response bodies field by field; typing each one would add nothing.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The API's audience in tests (its origin is the `Origin` the cookie checks expect). */
export const API_AUDIENCE = TEST_API_AUDIENCE;

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
  request<T = Json>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
  /**
   * An access token for the test user `label` with `roles` (scope `api` unless
   * overridden). With the real auth server: the user is created once per label as
   * `<label>@test.example` and signs in through Authorization Code + PKCE; tokens are
   * cached per (label, roles, scope) unless `fresh`.
   */
  token(label: string, roles: string[], options?: TokenRequest): Promise<string>;
  /** The user behind `label`, created with `roles` on first use. */
  user(label: string, roles: string[]): Promise<TestUser>;
  /** The id (token `sub`) of the user behind `label`; `token` or `user` must have run. */
  userId(label: string): string;
  /** A token for an existing user whose password is known (e.g. from `makeUser`). */
  tokenFor(
    user: { id: string; email: string; roles: string[]; password?: string },
    options?: TokenRequest,
  ): Promise<string>;
  /** A client-credentials token of a confidential client with `roles`; `sub` is `client:<id>`. */
  clientToken(roles: string[], scope?: string): Promise<string>;
  close(): Promise<void>;
}

/** The default harness: the API trusting the real auth server, which runs beside it. */
export interface AuthServerTestApi extends TestApi {
  kind: 'auth-server';
  auth: RunningAuthServer;
}

/**
 * The API trusting the TEST ISSUER (@portcullis/testing) instead: only for tokens the real
 * server never issues (expired, foreign iss/aud, forged headers, unknown subjects).
 */
export interface IssuerTestApi extends TestApi {
  kind: 'test-issuer';
  issuer: TestIssuer;
  token(label: string, roles: string[], options?: Partial<TokenOptions>): Promise<string>;
}

export interface StartOptions {
  env?: Record<string, string>;
  deps?: Partial<ApiDeps>;
  /** The log of both servers (the API and the real auth server); default silent. */
  logger?: Logger;
}

/** Decoded payload of a JWT (not verified): e.g. the `sub` of a client-credentials token. */
export function claimsOf(jwt: string): Record<string, Json> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString());
}

/**
 * The API on port 0 against a fresh database of its own, trusting the REAL auth server
 * (started on the same database, port 0) — or, with `issuer: 'test'`, the test issuer.
 */
export function startTestApi(options: StartOptions & { issuer: 'test' }): Promise<IssuerTestApi>;
export function startTestApi(
  options?: StartOptions & { issuer?: 'auth-server' },
): Promise<AuthServerTestApi>;
export async function startTestApi(
  options: StartOptions & { issuer?: 'auth-server' | 'test' } = {},
): Promise<AuthServerTestApi | IssuerTestApi> {
  const logger = options.logger ?? pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const database = await createTestDatabase();
  let real: RealIssuer | undefined;
  let fake: TestIssuer | undefined;
  try {
    if (options.issuer === 'test') {
      fake = await startTestIssuer({ audience: API_AUDIENCE });
    } else {
      real = await startRealIssuer({ db: database.db, audience: API_AUDIENCE, logger });
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  const issuerUrl = real?.issuer ?? fake!.issuer;
  const config = parseApiConfig({
    NODE_ENV: 'test',
    API_PORT: '0',
    ISSUER: issuerUrl,
    API_AUDIENCE,
    JWKS_URL: `${issuerUrl}/.well-known/jwks.json`,
    // The harness signs its users in with a password only (acr urn:portcullis:acr:pwd),
    // so its tests run without step-up; step-up is tested with the test issuer
    // (step-up.test.ts), and with the real server's second factor by passing
    // STEP_UP=required (step-up-auth-server.test.ts).
    ...(real ? { STEP_UP: 'off' } : {}),
    ...options.env,
  });
  async function closeIssuers() {
    await real?.close();
    await fake?.close();
    await database.close();
  }
  let server: RunningApiServer;
  try {
    server = await startApiServer(config, { db: database.db, logger, ...options.deps });
  } catch (error) {
    await closeIssuers();
    throw error;
  }

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

  const base = {
    url: server.url,
    config,
    database,
    request,
  };
  async function closeAll() {
    await server.close();
    await closeIssuers();
  }

  if (real) {
    const issuer = real;
    return {
      ...base,
      kind: 'auth-server',
      auth: issuer.server,
      token: (label, roles, extra) => issuer.token(label, roles, extra),
      user: (label, roles) => issuer.user(label, roles),
      userId: (label) => issuer.userId(label),
      tokenFor: (user, extra) =>
        issuer.tokenFor({ email: user.email, password: user.password ?? PASSWORD }, extra),
      clientToken: (roles, scope) => issuer.clientToken(roles, scope),
      close: closeAll,
    };
  }

  const issuer = fake!;
  return {
    ...base,
    kind: 'test-issuer',
    issuer,
    // The test issuer signs whatever it is told: the label is the subject.
    token: (sub, roles, extra = {}) => issuer.tokenFor({ sub, roles, ...extra }),
    user: async (label, roles) => ({
      id: label,
      email: `${label}@test.example`,
      password: '',
      roles,
    }),
    userId: (label) => label,
    tokenFor: (user, extra = {}) =>
      issuer.tokenFor({
        sub: user.id,
        roles: user.roles,
        ...(extra.scope ? { scope: extra.scope } : {}),
      }),
    clientToken: (roles, scope = 'api') =>
      issuer.tokenFor({ sub: 'client:test-client', clientId: 'test-client', roles, scope }),
    close: closeAll,
  };
}
