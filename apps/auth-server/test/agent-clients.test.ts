import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createUser,
  decodeJwt,
  startDocumentServer,
  TEST_API_AUDIENCE,
  type DocumentServer,
  until,
} from '@portcullis/testing';

// README "Dynamic client registration" (RFC 7591/7592) and "Client ID Metadata Documents".

const REDIRECT = 'http://127.0.0.1:8976/callback';
type Json = Record<string, unknown>;

async function discovery(t: TestAuthServer): Promise<Json> {
  return (await (await fetch(`${t.issuer}/.well-known/openid-configuration`)).json()) as Json;
}

async function register(t: TestAuthServer, metadata: Json, token?: string) {
  const res = await fetch(`${t.issuer}/register`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(metadata),
  });
  const text = await res.text();
  const body = (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as Json;
  return { status: res.status, headers: res.headers, body };
}

const PUBLIC_CLIENT = { client_name: 'Agent', redirect_uris: [REDIRECT] };

/** Signs `user` in with Authorization Code + PKCE through the real pages; the token response. */
async function signIn(
  t: TestAuthServer,
  clientId: string,
  user: { email: string; password: string },
  pages: string[] = [],
) {
  const config = await oidc.discovery(new URL(t.issuer), clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid api',
    resource: TEST_API_AUDIENCE,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
  });
  const callback = await browserLogin(url.href, user, { stopAt: REDIRECT, b: browser(), pages });
  return oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: 'st',
  });
}

describe('REGISTRATION=off (the default)', () => {
  let t: TestAuthServer;
  beforeAll(async () => {
    t = await startTestAuthServer();
  });
  afterAll(() => t.close());

  test('no registration endpoint in discovery, none served, no tokens issued', async () => {
    expect((await discovery(t))['registration_endpoint']).toBeUndefined();
    expect((await register(t, PUBLIC_CLIENT)).status).toBe(404);
    const issued = await t.admin('POST', '/admin/registration-tokens', {});
    expect(issued.status).toBe(409);
    expect(issued.body.error).toBe('conflict');
  });
});

describe('REGISTRATION=token', () => {
  let t: TestAuthServer;
  beforeAll(async () => {
    t = await startTestAuthServer({ REGISTRATION: 'token', REGISTRATION_ROLES: 'viewer' });
  });
  afterAll(() => t.close());

  test('discovery names the endpoint; without an initial access token: 401', async () => {
    expect((await discovery(t))['registration_endpoint']).toBe(`${t.issuer}/register`);
    const anonymous = await register(t, PUBLIC_CLIENT);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('invalid_token');
  });

  test('registers with an admin token; reads, updates and deletes itself; audited and listed', async () => {
    const issued = await t.admin('POST', '/admin/registration-tokens', { ttl: 600 });
    expect(issued.status).toBe(201);
    const token = issued.body.initial_access_token as string;
    expect(Date.parse(issued.body.expires_at)).toBeGreaterThan(Date.now());

    const created = await register(t, PUBLIC_CLIENT, token);
    expect(created.status).toBe(201);
    const client = created.body;
    expect(client).toMatchObject({
      client_name: 'Agent',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      scope: 'openid profile email offline_access api',
      dynamic_registration: true,
      registration_client_uri: `${t.issuer}/register/${String(client['client_id'])}`,
    });
    expect(client['client_secret']).toBeUndefined();
    const rat = client['registration_access_token'] as string;
    const uri = client['registration_client_uri'] as string;

    const listed = await t.admin('GET', '/admin/clients');
    const row = listed.body.items.find((c: Json) => c['client_id'] === client['client_id']);
    expect(row).toMatchObject({ dynamic_registration: true, client_name: 'Agent' });

    const read = await fetch(uri, { headers: { authorization: `Bearer ${rat}` } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as Json)['client_name']).toBe('Agent');

    const update = await fetch(uri, {
      method: 'PUT',
      headers: { authorization: `Bearer ${rat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...PUBLIC_CLIENT, client_id: client['client_id'], client_name: 'B' }),
    });
    expect(update.status).toBe(200);
    const updated = (await update.json()) as Json;
    expect(updated).toMatchObject({ client_name: 'B', dynamic_registration: true });
    // The policy applies to an update too.
    const widen = await fetch(uri, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${String(updated['registration_access_token'])}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ ...PUBLIC_CLIENT, client_id: client['client_id'], first_party: true }),
    });
    expect(widen.status).toBe(400);

    const removed = await fetch(uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${String(updated['registration_access_token'])}` },
    });
    expect(removed.status).toBe(204);
    expect((await t.admin('GET', '/admin/clients')).body.items).not.toContainEqual(
      expect.objectContaining({ client_id: client['client_id'] }),
    );

    const kindsOf = (items: Json[]) =>
      items
        .filter(
          (e) => e['clientId'] === client['client_id'] || e['client_id'] === client['client_id'],
        )
        .map((e) => e['kind']);
    const audit = await until(
      () => t.admin('GET', '/admin/audit?limit=20'),
      (res) => kindsOf(res.body.items).length >= 3,
      5000,
    );
    const kinds = kindsOf(audit.body.items);
    expect(kinds).toEqual(
      expect.arrayContaining(['client_registered', 'client_updated', 'client_deleted']),
    );
    const issuedRows = (audit.body.items as Json[]).filter(
      (e) => e['kind'] === 'registration_token_issued',
    );
    expect(issuedRows.length).toBeGreaterThan(0);
  });

  test('the operator policy: scopes, grant types, roles, secrets and redirects', async () => {
    const token = (await t.admin('POST', '/admin/registration-tokens', {})).body
      .initial_access_token as string;
    const refused: Array<[Json, RegExp, string?]> = [
      [{ scope: 'openid phone' }, /scope phone/],
      [{ grant_types: ['client_credentials'] }, /client_credentials/],
      [{ roles: ['admin'] }, /role admin/],
      [{ token_endpoint_auth_method: 'client_secret_basic' }, /none or private_key_jwt/],
      [{ first_party: true }, /first_party/],
      [{ introspection: true }, /introspection/],
      [
        { redirect_uris: ['http://agent.example/cb'] },
        /https or http on a loopback/,
        'invalid_redirect_uri',
      ],
    ];
    for (const [extra, description, error = 'invalid_client_metadata'] of refused) {
      const res = await register(t, { ...PUBLIC_CLIENT, ...extra }, token);
      expect([res.status, res.body.error]).toEqual([400, error]);
      expect(String(res.body.error_description)).toMatch(description);
    }
    // Within the policy: a permission `api` covers, and a role REGISTRATION_ROLES offers.
    const narrow = await register(
      t,
      { ...PUBLIC_CLIENT, scope: 'openid orders:read', roles: ['viewer'] },
      token,
    );
    expect(narrow.status).toBe(201);
    expect(narrow.body).toMatchObject({ scope: 'openid orders:read', roles: ['viewer'] });
  });

  test('a registered client signs a user in with PKCE and gets an API token', async () => {
    const token = (await t.admin('POST', '/admin/registration-tokens', {})).body
      .initial_access_token as string;
    const client = (await register(t, PUBLIC_CLIENT, token)).body;
    const user = await createUser(t, ['viewer']);
    const pages: string[] = [];
    const tokens = await signIn(t, String(client['client_id']), user, pages);
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({
      aud: TEST_API_AUDIENCE,
      sub: user.id,
    });
    // The consent page names the client and the host it sends the user back to.
    expect(pages.join('\n')).toContain('This application is at <strong>127.0.0.1:8976</strong>');
  });
});

describe('REGISTRATION=open', () => {
  let t: TestAuthServer;
  beforeAll(async () => {
    t = await startTestAuthServer({
      REGISTRATION: 'open',
      REGISTRATION_IP_LIMIT: '3',
      REGISTRATION_SCOPES: 'openid orders:read',
    });
  });
  afterAll(() => t.close());

  test('anonymous: public clients only, limited per IP', async () => {
    const created = await register(t, PUBLIC_CLIENT);
    expect(created.status).toBe(201);
    expect(created.body['token_endpoint_auth_method']).toBe('none');
    // The operator's scopes: the default, and the most a client may ask for.
    expect(created.body['scope']).toBe('openid orders:read');
    const wider = await register(t, { ...PUBLIC_CLIENT, scope: 'openid api' });
    expect([wider.status, wider.body.error_description]).toEqual([
      400,
      'scope api is not offered to registered clients',
    ]);
    expect(typeof created.body['registration_access_token']).toBe('string');

    const keyed = await register(t, {
      ...PUBLIC_CLIENT,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [] },
    });
    expect(keyed.status).toBe(400);
    expect(keyed.body.error).toBe('invalid_client_metadata');

    const limited = await register(t, PUBLIC_CLIENT);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // An administrator's token still registers (it is not counted as anonymous).
    const token = (await t.admin('POST', '/admin/registration-tokens', {})).body
      .initial_access_token as string;
    expect((await register(t, PUBLIC_CLIENT, token)).status).toBe(201);
    const anonymous = (items: Json[]) => items.map((e) => (e['detail'] as Json)['anonymous']);
    // Audit rows are written beside the response (provider events).
    const audit = await until(
      () => t.admin('GET', '/admin/audit?kind=client_registered'),
      (res) => res.body.items.length >= 2,
      5000,
    );
    expect(anonymous(audit.body.items)).toEqual([false, true]);
  });
});

describe('what a registration may set (one allow-list)', () => {
  let t: TestAuthServer;
  beforeAll(async () => {
    t = await startTestAuthServer({ REGISTRATION: 'open', REGISTRATION_ROLES: 'viewer' });
  });
  afterAll(() => t.close());

  const EXCHANGE = { token_exchange: { audiences: [TEST_API_AUDIENCE], impersonation: true } };

  test('administrator-only settings are refused, anonymously and with an initial access token', async () => {
    const token = (await t.admin('POST', '/admin/registration-tokens', {})).body
      .initial_access_token as string;
    const keyed = {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: {
        keys: [
          {
            kty: 'EC',
            crv: 'P-256',
            x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
            y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
          },
        ],
      },
    };
    const cases: Array<[Json, string | undefined]> = [
      [EXCHANGE, undefined],
      [EXCHANGE, token],
      [{ ...keyed, ...EXCHANGE }, token],
      [{ require_mfa: false }, token],
      [{ signup: true }, undefined],
      [{ fapi: '2.0' }, token],
      [{ client_assertion_legacy_audience: true }, token],
      [{ dynamic_registration: false }, undefined],
      [{ software_statement: 'eyJ.e30.' }, undefined],
    ];
    for (const [extra, iat] of cases) {
      const res = await register(t, { ...PUBLIC_CLIENT, ...extra }, iat);
      const member = Object.keys(extra).at(-1)!;
      expect([member, res.status, res.body.error]).toEqual([
        member,
        400,
        'invalid_client_metadata',
      ]);
      expect(String(res.body.error_description)).toContain(member);
    }
    const clients = (await t.admin('GET', '/admin/clients')).body.items as Json[];
    expect(clients.filter((c) => 'token_exchange' in c)).toEqual([]);
  });

  test('an RFC 7592 update may not add one either; reading and sending back the record works', async () => {
    const created = await register(t, PUBLIC_CLIENT);
    expect(created.status).toBe(201);
    const uri = created.body['registration_client_uri'] as string;
    const read = await fetch(uri, {
      headers: { authorization: `Bearer ${String(created.body['registration_access_token'])}` },
    });
    const record = (await read.json()) as Json;
    const {
      registration_access_token: rat,
      registration_client_uri: _uri,
      client_id_issued_at: _issued,
      ...metadata
    } = record;
    const put = (body: Json, bearer: unknown) =>
      fetch(uri, {
        method: 'PUT',
        headers: { authorization: `Bearer ${String(bearer)}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const widen = await put({ ...metadata, ...EXCHANGE }, rat);
    expect(widen.status).toBe(400);
    expect(((await widen.json()) as Json)['error']).toBe('invalid_client_metadata');
    const same = await put({ ...metadata, client_name: 'Renamed' }, rat);
    expect(same.status).toBe(200);
    const updated = (await same.json()) as Json;
    expect(updated['client_name']).toBe('Renamed');
    expect(updated).not.toHaveProperty('token_exchange');
  });

  test('post_logout_redirect_uris follow the redirect_uris rules', async () => {
    for (const member of ['redirect_uris', 'post_logout_redirect_uris']) {
      const refused = await register(t, {
        ...PUBLIC_CLIENT,
        [member]: ['http://evil.example/bye'],
      });
      expect([member, refused.status, refused.body.error]).toEqual([
        member,
        400,
        'invalid_redirect_uri',
      ]);
      expect(refused.body.error_description).toBe(
        `${member} must be https or http on a loopback address`,
      );
    }
    const fine = await register(t, {
      ...PUBLIC_CLIENT,
      post_logout_redirect_uris: ['http://127.0.0.1:8976/bye', 'https://agent.example/bye'],
    });
    expect(fine.status).toBe(201);
  });
});

describe('Client ID Metadata Documents', () => {
  let t: TestAuthServer;
  let docs: DocumentServer;
  beforeAll(async () => {
    docs = await startDocumentServer();
    t = await startTestAuthServer();
  });
  afterAll(async () => {
    await t.close();
    await docs.close();
  });

  const documentOf = (clientId: string, extra: Json = {}) => ({
    client_id: clientId,
    client_name: 'Document Agent',
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    ...extra,
  });

  test('discovery says so; an https client_id whose document names it signs a user in', async () => {
    expect((await discovery(t))['client_id_metadata_document_supported']).toBe(true);
    const clientId = `${docs.origin}/agent.json`;
    docs.serve('/agent.json', documentOf(clientId), { 'cache-control': 'max-age=300' });
    const user = await createUser(t, ['viewer']);
    const pages: string[] = [];
    const tokens = await signIn(t, clientId, user, pages);
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({ aud: TEST_API_AUDIENCE });
    const consent = pages.find((p) => p.includes('asks for'))!;
    expect(consent).toContain(
      `This application is at <strong>${new URL(docs.origin).host}</strong>`,
    );
    expect(consent).toContain('Document Agent');
    // Cached per its Cache-Control: one fetch for the whole sign-in.
    expect(docs.fetches.get('/agent.json')).toBe(1);
  });

  test('refused: a document naming another client, a secret, administrator-only settings, a wrong redirect', async () => {
    const cases: Array<[string, Json, RegExp?]> = [
      ['/other.json', { client_id: `${docs.origin}/elsewhere.json` }],
      ['/secret.json', { token_endpoint_auth_method: 'client_secret_basic' }],
      ['/first-party.json', { first_party: true }, /invalid_client_metadata: first_party/],
      ['/roles.json', { roles: ['admin'] }],
      [
        '/exchange.json',
        { token_exchange: { audiences: [TEST_API_AUDIENCE] } },
        /invalid_client_metadata: token_exchange/,
      ],
      [
        '/logout.json',
        { post_logout_redirect_uris: ['http://evil.example/bye'] },
        /invalid_redirect_uri: post_logout_redirect_uris must be https or http on a loopback/,
      ],
    ];
    for (const [path, extra, error = /invalid_client/] of cases) {
      const clientId = `${docs.origin}${path}`;
      docs.serve(path, documentOf(clientId, extra));
      const res = await authorize(t, clientId, REDIRECT);
      expect([path, res.status]).toEqual([path, 400]);
      expect(await res.text()).toMatch(error);
    }
    const clientId = `${docs.origin}/agent-redirect.json`;
    docs.serve('/agent-redirect.json', documentOf(clientId));
    const wrongRedirect = await authorize(t, clientId, 'http://127.0.0.1:8976/other');
    expect(wrongRedirect.status).toBe(400);
    expect(await wrongRedirect.text()).toMatch(/redirect_uri/);
  });

  test('a document slower than the fetch timeout: one fetch per /authorize, answered within the bound', async () => {
    const clientId = `${docs.origin}/slow.json`;
    docs.serve('/slow.json', documentOf(clientId), {}, { delayMs: 4000 });
    const started = Date.now();
    const res = await authorize(t, clientId, REDIRECT);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/invalid_client/);
    // The fetch timeout is 2.5 s (oidc-provider's default); the error page must not fetch again.
    expect(Date.now() - started).toBeLessThan(3500);
    expect(docs.fetches.get('/slow.json')).toBe(1);
  });

  test('concurrent /authorize share one fetch of a document, also one that fails', async () => {
    const okId = `${docs.origin}/shared.json`;
    docs.serve(
      '/shared.json',
      documentOf(okId),
      { 'cache-control': 'max-age=300' },
      {
        delayMs: 1000,
      },
    );
    const ok = await Promise.all([1, 2, 3].map(() => authorize(t, okId, REDIRECT)));
    expect(ok.map((r) => r.status)).toEqual([303, 303, 303]);
    expect(docs.fetches.get('/shared.json')).toBe(1);

    const failingId = `${docs.origin}/shared-slow.json`;
    docs.serve('/shared-slow.json', documentOf(failingId), {}, { delayMs: 4000 });
    const failed = await Promise.all([1, 2, 3].map(() => authorize(t, failingId, REDIRECT)));
    expect(failed.map((r) => r.status)).toEqual([400, 400, 400]);
    expect(docs.fetches.get('/shared-slow.json')).toBe(1);
  });

  test('Cache-Control: no-store or max-age=0 is held to the 30 s minimum', async () => {
    for (const [path, cacheControl] of [
      ['/no-store.json', 'no-store'],
      ['/max-age-0.json', 'max-age=0'],
    ] as const) {
      const clientId = `${docs.origin}${path}`;
      docs.serve(path, documentOf(clientId), { 'cache-control': cacheControl });
      expect((await authorize(t, clientId, REDIRECT)).status).toBe(303);
      expect((await authorize(t, clientId, REDIRECT)).status).toBe(303);
      expect([path, docs.fetches.get(path)]).toEqual([path, 1]);
    }
  });

  test('CLIENT_ID_METADATA_HOSTS limits where documents come from; off removes the feature', async () => {
    const limited = await t.startInstance({ CLIENT_ID_METADATA_HOSTS: 'agents.example.com' });
    const clientId = `${docs.origin}/fenced.json`;
    docs.serve('/fenced.json', documentOf(clientId));
    const res = await authorize(limited, clientId, REDIRECT);
    expect(res.status).toBe(400);
    expect(docs.fetches.get('/fenced.json')).toBeUndefined();

    const off = await t.startInstance({ CLIENT_ID_METADATA_DOCUMENTS: 'off' });
    expect((await discovery(off))['client_id_metadata_document_supported']).toBeUndefined();
    expect((await authorize(off, clientId, REDIRECT)).status).toBe(400);
    expect(docs.fetches.get('/fenced.json')).toBeUndefined();
  });
});

/** GET /authorize with PKCE for `clientId`: the answer without following redirects. */
async function authorize(t: TestAuthServer, clientId: string, redirectUri: string) {
  const url = new URL(`${t.issuer}/authorize`);
  const params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return fetch(url, { redirect: 'manual' });
}
