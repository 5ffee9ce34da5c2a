/**
 * The REAL authorization server (`startAuthServer` from @portcullis/auth-server) as the
 * API tests' token source: users are stored through packages/accounts, a public PKCE
 * client and confidential client-credentials clients are registered through the admin
 * API, and every user token comes from a real Authorization Code + PKCE flow (login
 * form, consent page, code exchange) driven with openid-client.
 *
 * Sign-ins are the slow part (argon2id on every login), so each user keeps one browser
 * session per harness and tokens are cached per (label, roles, scope).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createAccountsRepo } from '@portcullis/accounts';
import type { RunningAuthServer } from '@portcullis/auth-server';
import type { Db } from '@portcullis/db';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { startTestAuthServer } from '@portcullis/testing/auth-server';
import { browser, type Browser, pkceSignIn } from '@portcullis/testing';

/** Where the test client's authorization responses go (never fetched: the flow stops there). */
export const REDIRECT_URI = 'http://127.0.0.1/cb';

/** A stored user whose password the tests know (so it can sign in at the auth server). */
export interface TestUser {
  id: string;
  email: string;
  password: string;
  roles: string[];
}

export interface TokenRequest {
  /** OAuth scope of the access token; default `api` (all role permissions). `openid` is always added. */
  scope?: string;
  /** A new sign-in instead of a cached token (e.g. after the cached one was revoked). */
  fresh?: boolean;
}

export interface RealIssuer {
  server: RunningAuthServer;
  issuer: string;
  audience: string;
  /** The user behind `label`, created on first use as `<label>@test.example` with `roles`. */
  user(label: string, roles: string[]): Promise<TestUser>;
  /** Id of a user created by `user`/`token` (the `sub` of its tokens). */
  userId(label: string): string;
  token(label: string, roles: string[], request?: TokenRequest): Promise<string>;
  /** Signs in an existing user (e.g. from `makeUser`, password known) and returns its access token. */
  tokenFor(user: { email: string; password: string }, request?: TokenRequest): Promise<string>;
  /** Client credentials for a confidential client with `roles` (sub `client:<client_id>`). */
  clientToken(roles: string[], scope?: string): Promise<string>;
  close(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- admin API answers, checked by status
type Json = any;

const rolesKey = (roles: readonly string[]) => [...roles].sort().join(',');

/** The auth server (startTestAuthServer) on `db`, the API's test database, issuing access tokens for `audience`. */
export async function startRealIssuer(options: {
  db: Db;
  audience: string;
  logger: Logger;
  env?: Record<string, string>;
}): Promise<RealIssuer> {
  const { db, audience } = options;
  const auth = await startTestAuthServer(
    { API_AUDIENCE: audience, ...options.env },
    { db, logger: options.logger },
  );
  const { server } = auth;
  const accounts = createAccountsRepo(db);

  async function admin(method: string, pathname: string, body?: unknown): Promise<Json> {
    const { status, body: json } = await auth.admin(method, pathname, body);
    if (status >= 400) throw new Error(`${method} ${pathname}: ${status} ${JSON.stringify(json)}`);
    return json;
  }

  const discover = (clientId: string, secret?: string) =>
    oidc.discovery(
      new URL(server.issuer),
      clientId,
      secret,
      secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );

  // One public PKCE client per harness. Not first-party: every new scope goes through
  // the consent page, as for a third-party app.
  let spa: Promise<oidc.Configuration> | undefined;
  const spaConfig = () =>
    (spa ??= admin('POST', '/admin/clients', {
      client_id: `api-test-spa-${randomUUID().slice(0, 8)}`,
      client_name: 'API tests',
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      first_party: false,
    }).then((client) => discover(client.client_id)));

  const users = new Map<string, Promise<TestUser>>();
  const ids = new Map<string, string>();
  const tokens = new Map<string, Promise<string>>();
  /** One cookie jar (auth-server session) per user: later sign-ins skip the password. */
  const browsers = new Map<string, Browser>();
  const clients = new Map<string, Promise<oidc.Configuration>>();

  function user(label: string, roles: string[]): Promise<TestUser> {
    const known = users.get(label);
    if (known) {
      return known.then((u) => {
        if (rolesKey(u.roles) !== rolesKey(roles)) {
          throw new Error(
            `test user "${label}" has roles [${u.roles}], not [${roles}]: use another label`,
          );
        }
        return u;
      });
    }
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const created = accounts
      .create({ email: `${label}@test.example`, password, roles })
      .then((u) => {
        ids.set(label, u.id);
        return { id: u.id, email: u.email, password, roles: [...roles] };
      });
    users.set(label, created);
    return created;
  }

  /** Authorization Code + PKCE through the login form and consent page. */
  async function signIn(who: { email: string; password: string }, scope: string) {
    const config = await spaConfig();
    const key = who.email.toLowerCase();
    let b = browsers.get(key);
    if (!b) browsers.set(key, (b = browser()));
    const response = await pkceSignIn(config, who, {
      scope: `openid ${scope}`,
      resource: audience,
      b,
      redirectUri: REDIRECT_URI,
    });
    return response.access_token;
  }

  function cached(key: string, fresh: boolean | undefined, get: () => Promise<string>) {
    const hit = fresh ? undefined : tokens.get(key);
    if (hit) return hit;
    const pending = get();
    tokens.set(key, pending);
    // A failed sign-in is not cached.
    pending.catch(() => tokens.get(key) === pending && tokens.delete(key));
    return pending;
  }

  return {
    server,
    issuer: server.issuer,
    audience,
    user,
    userId(label) {
      const id = ids.get(label);
      if (!id) throw new Error(`no test user "${label}" yet: call api.token or api.user first`);
      return id;
    },
    token(label, roles, request = {}) {
      const scope = request.scope ?? 'api';
      return cached(`user ${label} ${rolesKey(roles)} ${scope}`, request.fresh, async () =>
        signIn(await user(label, roles), scope),
      );
    },
    tokenFor(who, request = {}) {
      const scope = request.scope ?? 'api';
      return cached(`login ${who.email.toLowerCase()} ${scope}`, request.fresh, () =>
        signIn(who, scope),
      );
    },
    clientToken(roles, scope = 'api') {
      return cached(`client ${rolesKey(roles)} ${scope}`, false, async () => {
        const key = rolesKey(roles);
        let config = clients.get(key);
        if (!config) {
          config = admin('POST', '/admin/clients', {
            client_id: `api-test-svc-${randomUUID().slice(0, 8)}`,
            grant_types: ['client_credentials'],
            roles,
          }).then((c) => discover(c.client_id, c.client_secret));
          clients.set(key, config);
        }
        return (await oidc.clientCredentialsGrant(await config, { scope })).access_token;
      });
    },
    close: () => auth.close(),
  };
}
