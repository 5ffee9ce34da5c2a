/**
 * The package as another service uses it (README.md of packages/claims): a real Koa server
 * protected by `koaAuth(createResourceServer(…))`, and the README's Express service, tokens
 * from a test issuer served over a JWKS URL, answers read over HTTP. The packed Express
 * adapter also runs outside the workspace in infra/test/pack-install.test.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import express from 'express';
import Koa from 'koa';
import { startTestIssuer, TEST_API_AUDIENCE, type TestIssuer } from '@portcullis/testing';
import { expressAuth, expressResourceMetadata } from '../src/express.js';
import {
  ACR,
  createResourceServer,
  resourceMetadataUrl,
  type ResourceServerOptions,
} from '../src/index.js';
import { koaAuth, koaResourceMetadata, type KoaContextLike } from '../src/koa.js';

let issuer: TestIssuer;
const servers: { close(): void }[] = [];

beforeAll(async () => {
  issuer = await startTestIssuer({ audience: TEST_API_AUDIENCE });
});
afterAll(async () => {
  for (const server of servers) server.close();
  await issuer.close();
});

/** A Koa app of a few lines: every route authenticated, /invoices, /archive and /admin with rules. */
async function start(options: Partial<ResourceServerOptions> = {}): Promise<string> {
  const auth = createResourceServer({
    issuer: issuer.issuer,
    audience: TEST_API_AUDIENCE,
    jwksUri: issuer.jwksUrl,
    ...options,
  });
  const app = new Koa();
  const routes: Record<string, ReturnType<typeof koaAuth>> = {
    '/invoices': koaAuth(auth, { permission: 'invoices:read' }),
    '/archive': koaAuth(auth, { permission: 'invoices:read', scopes: ['archive'] }),
    '/admin': koaAuth(auth, { stepUp: { acr: ACR.mfa, maxAgeSec: 300 } }),
  };
  if (options.metadata) app.use(koaResourceMetadata(auth));
  app.use(koaAuth(auth));
  app.use(async (ctx, next) => {
    const rule = routes[ctx.path];
    if (rule) await rule(ctx, next);
    else await next();
  });
  app.use((ctx) => {
    ctx.body = { subject: (ctx.state as KoaContextLike['state']).principal?.subject };
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function call(url: string, headers: Record<string, string> = {}, init: RequestInit = {}) {
  const res = await fetch(url, { ...init, headers: { ...headers, ...init.headers } });
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    nonce: res.headers.get('dpop-nonce'),
    cacheControl: res.headers.get('cache-control'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const now = () => Math.floor(Date.now() / 1000);

describe('koaAuth over createResourceServer', () => {
  let base: string;
  beforeAll(async () => {
    base = await start();
  });

  it('accepts a token of the issuer and exposes its principal', async () => {
    const token = await issuer.tokenFor({ sub: 'user-1', roles: ['viewer'] });
    expect(await call(`${base}/me`, bearer(token))).toMatchObject({
      status: 200,
      body: { subject: 'user-1' },
    });
  });

  it('answers a request without a credential with bare challenges (RFC 6750 §3)', async () => {
    const res = await call(`${base}/me`);
    expect(res.status).toBe(401);
    expect(res.challenge).toBe(
      'Bearer realm="portcullis", DPoP realm="portcullis", algs="ES256 ES384 EdDSA Ed25519 PS256 RS256"',
    );
    expect(res.body).toEqual({ error: 'unauthenticated' });
    expect(res.cacheControl).toBe('no-store');
  });

  it('names why a presented token was refused, in the challenge and the body', async () => {
    const expired = await issuer.tokenFor({ sub: 'user-1', expiresIn: -120 });
    const res = await call(`${base}/me`, bearer(expired));
    expect(res.status).toBe(401);
    expect(res.challenge).toMatch(
      /^Bearer realm="portcullis", error="invalid_token", error_description="token expired", DPoP /,
    );
    expect(res.body).toEqual({ error: 'invalid_token', message: 'token expired' });
    const foreign = await issuer.tokenFor({ sub: 'user-1', claims: { aud: 'https://other' } });
    expect((await call(`${base}/me`, bearer(foreign))).body).toEqual({
      error: 'invalid_token',
      message: 'token audience is not this API',
    });
  });

  it('checks a route permission against the scope, with no role table (403 insufficient_scope)', async () => {
    // The issuer narrowed the scope to what the subject's roles grant: it is the permissions.
    const reader = await issuer.tokenFor({ sub: 'user-1', scope: 'openid invoices:read' });
    expect((await call(`${base}/invoices`, bearer(reader))).status).toBe(200);
    const all = await issuer.tokenFor({ sub: 'user-1', scope: 'invoices:*' });
    expect((await call(`${base}/invoices`, bearer(all))).status).toBe(200);
    // Role names alone grant nothing here: the package holds no role table.
    const named = await issuer.tokenFor({ sub: 'user-2', roles: ['admin'], scope: 'openid' });
    const res = await call(`${base}/invoices`, bearer(named));
    expect(res).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.challenge).toMatch(
      /^Bearer realm="portcullis", error="insufficient_scope", scope="invoices:read"/,
    );
    // `api` ("what my roles grant") means nothing without a table: a plain 403.
    const api = await issuer.tokenFor({ sub: 'user-2', roles: ['admin'], scope: 'api' });
    expect(await call(`${base}/invoices`, bearer(api))).toMatchObject({
      status: 403,
      challenge: null,
      body: { error: 'forbidden' },
    });
  });

  it('checks a route scope besides its permission (403 with insufficient_scope)', async () => {
    const reader = await issuer.tokenFor({ sub: 'user-1', scope: 'invoices:read' });
    const res = await call(`${base}/archive`, bearer(reader));
    expect(res).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(res.challenge).toMatch(
      /^Bearer realm="portcullis", error="insufficient_scope", scope="archive"/,
    );
    const archivist = await issuer.tokenFor({ sub: 'user-1', scope: 'invoices:read archive' });
    expect((await call(`${base}/archive`, bearer(archivist))).status).toBe(200);
  });

  it('asks for a stronger or newer sign-in on a step-up route (RFC 9470)', async () => {
    const password = await issuer.tokenFor({
      sub: 'user-1',
      claims: { acr: ACR.password, auth_time: now() - 10 },
    });
    const weak = await call(`${base}/admin`, bearer(password));
    expect(weak.status).toBe(401);
    expect(weak.challenge).toBe(
      `Bearer realm="portcullis", error="insufficient_user_authentication", ` +
        `error_description="this operation requires a sign-in with a second factor", ` +
        `acr_values="${ACR.mfa}", max_age=300, DPoP realm="portcullis", ` +
        `algs="ES256 ES384 EdDSA Ed25519 PS256 RS256"`,
    );
    expect(weak.body).toEqual({
      error: 'insufficient_user_authentication',
      message: 'this operation requires a sign-in with a second factor',
      acr_values: ACR.mfa,
      max_age: 300,
    });
    const old = await issuer.tokenFor({
      sub: 'user-1',
      claims: { acr: ACR.mfa, auth_time: now() - 600 },
    });
    expect((await call(`${base}/admin`, bearer(old))).body).toMatchObject({
      error: 'insufficient_user_authentication',
      message: 'this operation requires a more recent sign-in',
    });
    const fresh = await issuer.tokenFor({
      sub: 'user-1',
      claims: { acr: ACR.mfa, auth_time: now() - 10 },
    });
    expect((await call(`${base}/admin`, bearer(fresh))).status).toBe(200);
    const client = await issuer.tokenFor({ sub: 'client:svc', clientId: 'svc' });
    expect(await call(`${base}/admin`, bearer(client))).toMatchObject({
      status: 403,
      body: { error: 'forbidden' },
    });
  });
});

describe('createResourceServer options', () => {
  it('refuses a token its deny list denies', async () => {
    const base = await start({ denyList: { isDenied: (claims) => claims.sub === 'revoked' } });
    const token = await issuer.tokenFor({ sub: 'revoked' });
    expect(await call(`${base}/me`, bearer(token))).toMatchObject({
      status: 401,
      body: { error: 'invalid_token', message: 'token revoked' },
    });
  });

  it('takes roles from a RoleSource, and applies a changed role to a token it has seen', async () => {
    const table = new Map<string, string[]>([['auditor', ['invoices:read']]]);
    const roles = { version: 1, permissionsOf: (role: string) => table.get(role) };
    const base = await start({ roles });
    // Scope `api`: every permission the table gives the token's roles.
    const token = await issuer.tokenFor({ sub: 'user-1', roles: ['auditor'], scope: 'api' });
    expect((await call(`${base}/invoices`, bearer(token))).status).toBe(200);
    // A role the table does not name grants nothing.
    const viewer = await issuer.tokenFor({ sub: 'user-2', roles: ['viewer'], scope: 'api' });
    expect((await call(`${base}/invoices`, bearer(viewer))).status).toBe(403);
    // With a table, the scope narrows the roles' permissions, never widens them.
    const narrow = await issuer.tokenFor({ sub: 'user-1', roles: ['auditor'], scope: 'openid' });
    expect((await call(`${base}/invoices`, bearer(narrow))).status).toBe(403);
    const wide = await issuer.tokenFor({ sub: 'user-2', roles: [], scope: 'invoices:read' });
    expect((await call(`${base}/invoices`, bearer(wide))).status).toBe(403);

    table.set('auditor', []);
    roles.version = 2;
    expect(await call(`${base}/invoices`, bearer(token))).toMatchObject({
      status: 403,
      body: { error: 'forbidden' },
    });
  });

  it('serves its RFC 9728 metadata, its scopes those its routes require, and names it in challenges', async () => {
    const base = await start({ metadata: { name: 'Invoices' } });
    const path = new URL(resourceMetadataUrl(TEST_API_AUDIENCE)).pathname;
    const res = await fetch(`${base}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await res.json()).toEqual({
      resource: TEST_API_AUDIENCE,
      authorization_servers: [issuer.issuer],
      scopes_supported: ['archive', 'invoices:read'],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256'],
      dpop_bound_access_tokens_required: false,
      resource_name: 'Invoices',
    });
    expect((await call(`${base}/invoices`)).challenge).toContain(
      `resource_metadata="${resourceMetadataUrl(TEST_API_AUDIENCE)}"`,
    );
    // Only GET and HEAD; anything else goes on to the routes (here: a token is needed).
    expect((await call(`${base}${path}`, {}, { method: 'POST' })).status).toBe(401);
  });

  it('serves the scopes its author gives, and refuses to serve metadata it was not given', async () => {
    const base = await start({
      dpop: false,
      metadata: {
        scopes: ['invoices:read', 'invoices:write'],
        documentation: 'https://docs.example',
      },
    });
    const body = (await (
      await fetch(`${base}${new URL(resourceMetadataUrl(TEST_API_AUDIENCE)).pathname}`)
    ).json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      scopes_supported: ['invoices:read', 'invoices:write'],
      resource_documentation: 'https://docs.example',
    });
    expect(body).not.toHaveProperty('dpop_signing_alg_values_supported');
    const bare = createResourceServer({ issuer: issuer.issuer, audience: TEST_API_AUDIENCE });
    expect(() => koaResourceMetadata(bare)).toThrow(/createResourceServer\(\{ metadata \}\)/);
    expect(() => expressResourceMetadata(bare)).toThrow(TypeError);
  });

  it('offers only Bearer with dpop: false, under its own realm and resource metadata', async () => {
    const base = await start({
      dpop: false,
      realm: 'orders',
      resourceMetadata: 'https://rs.example/.well-known/oauth-protected-resource',
    });
    const res = await call(`${base}/me`);
    expect(res.challenge).toBe(
      'Bearer realm="orders", resource_metadata="https://rs.example/.well-known/oauth-protected-resource"',
    );
    const token = await issuer.tokenFor({ sub: 'user-1' });
    expect((await call(`${base}/me`, { authorization: `DPoP ${token}` })).status).toBe(401);
  });

  it('accepts a DPoP-bound token only with a proof, and hands out server nonces', async () => {
    const base = await start({ dpop: { nonceSecret: 'a secret every instance shares' } });
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const token = await issuer.tokenFor({
      sub: 'user-1',
      claims: { cnf: { jkt: await calculateJwkThumbprint(jwk) } },
    });
    const proof = (nonce?: string) =>
      new SignJWT({
        htm: 'GET',
        htu: `${base}/me`,
        jti: randomUUID(),
        ath: createHash('sha256').update(token).digest('base64url'),
        ...(nonce ? { nonce } : {}),
      })
        .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk })
        .setIssuedAt()
        .sign(privateKey);

    const asBearer = await call(`${base}/me`, bearer(token));
    expect(asBearer).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
    expect(asBearer.body['message']).toMatch(/DPoP-bound/);

    const first = await call(`${base}/me`, { authorization: `DPoP ${token}`, dpop: await proof() });
    expect(first.status).toBe(401);
    expect(first.challenge).toMatch(/^DPoP realm="portcullis", error="use_dpop_nonce"/);
    expect(first.body).toMatchObject({ error: 'use_dpop_nonce' });
    expect(first.nonce).toEqual(expect.any(String));

    const second = await call(`${base}/me`, {
      authorization: `DPoP ${token}`,
      dpop: await proof(first.nonce!),
    });
    expect(second).toMatchObject({ status: 200, body: { subject: 'user-1' } });
    expect(second.nonce).toBe(first.nonce);
  });
});

/** The README's outside service ("A complete service"), as written there but for the listen. */
function invoiceService(issuerUrl: string): express.Express {
  const auth = createResourceServer({
    issuer: issuerUrl,
    audience: 'https://invoices.example',
    metadata: { name: 'Invoices' },
  });
  const canRead = expressAuth(auth, { permission: 'invoices:read' });
  const canWrite = expressAuth(auth, { permission: 'invoices:write' });

  const invoices = new Map<string, { id: string; amount: number; createdBy: string }>();
  const app = express();
  app.use(expressResourceMetadata(auth));
  app.use(expressAuth(auth));
  app.get('/invoices', canRead, (req, res) => {
    res.json({ items: [...invoices.values()] });
  });
  app.post('/invoices', canWrite, express.json(), (req, res) => {
    const amount = (req.body as { amount?: unknown } | undefined)?.amount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1) {
      res.status(422).json({ error: 'validation_failed', message: 'amount: a positive integer' });
      return;
    }
    const invoice = { id: randomUUID(), amount, createdBy: req.auth!.principal.subject };
    invoices.set(invoice.id, invoice);
    res.status(201).json(invoice);
  });
  return app;
}

describe("the README's outside Express service: no role table, the scope is the permissions", () => {
  let invoicesIssuer: TestIssuer;
  let base: string;
  beforeAll(async () => {
    invoicesIssuer = await startTestIssuer({ audience: 'https://invoices.example' });
    const server = invoiceService(invoicesIssuer.issuer).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => invoicesIssuer.close());

  const token = (scope: string) =>
    invoicesIssuer.tokenFor({ sub: 'user-1', roles: ['accountant'], scope });
  const post = (headers: Record<string, string>, body: unknown) =>
    call(`${base}/invoices`, headers, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });

  it('reads with invoices:read, writes with invoices:write, and names what is missing', async () => {
    const reader = await token('openid invoices:read');
    expect(await call(`${base}/invoices`, bearer(reader))).toMatchObject({
      status: 200,
      body: { items: [] },
    });
    const refused = await post(bearer(reader), { amount: 1200 });
    expect(refused).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(refused.challenge).toMatch(/error="insufficient_scope", scope="invoices:write"/);

    const writer = await token('invoices:read invoices:write');
    expect(await post(bearer(writer), { amount: 1200 })).toMatchObject({
      status: 201,
      body: { amount: 1200, createdBy: 'user-1' },
    });
    expect(await post(bearer(writer), { amount: 'a lot' })).toMatchObject({
      status: 422,
      body: { error: 'validation_failed' },
    });
    expect((await call(`${base}/invoices`, bearer(writer))).body['items']).toHaveLength(1);
  });

  it('answers without a token with a challenge naming its metadata, which it serves', async () => {
    const res = await call(`${base}/invoices`);
    expect(res.status).toBe(401);
    expect(res.challenge).toMatch(
      /^Bearer realm="portcullis", resource_metadata="https:\/\/invoices\.example\/\.well-known\/oauth-protected-resource"/,
    );
    const metadata = await call(`${base}/.well-known/oauth-protected-resource`);
    expect(metadata).toMatchObject({
      status: 200,
      body: {
        resource: 'https://invoices.example',
        authorization_servers: [invoicesIssuer.issuer],
        scopes_supported: ['invoices:read', 'invoices:write'],
        resource_name: 'Invoices',
      },
    });
  });
});

it('fits real Express and Koa apps without casts (compile-time)', () => {
  // Type-checked only: the structural types of the adapters accept the frameworks' own.
  const check = (auth: ReturnType<typeof createResourceServer>) => {
    const app = express();
    app.use(expressAuth(auth));
    app.get('/x', expressAuth(auth, { stepUp: { acr: ACR.mfa } }), (req, res) => {
      res.json({ subject: req.auth?.principal.subject });
    });
    new Koa().use(koaResourceMetadata(auth)).use(koaAuth(auth, { permission: 'invoices:read' }));
    app.use(expressResourceMetadata(auth));
  };
  expect(typeof check).toBe('function');
});
