/**
 * The package as another Koa service uses it (README.md of packages/claims): a real Koa
 * server protected by `koaAuth(createResourceServer(…))`, tokens from a test issuer
 * served over a JWKS URL, answers read over HTTP. The Express adapter runs outside the
 * workspace in infra/test/pack-install.test.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import express from 'express';
import Koa from 'koa';
import { startTestIssuer, TEST_API_AUDIENCE, type TestIssuer } from '@portcullis/testing';
import { expressAuth } from '../src/express.js';
import { ACR, createResourceServer, type ResourceServerOptions } from '../src/index.js';
import { koaAuth, type KoaContextLike } from '../src/koa.js';

let issuer: TestIssuer;
const servers: { close(): void }[] = [];

beforeAll(async () => {
  issuer = await startTestIssuer({ audience: TEST_API_AUDIENCE });
});
afterAll(async () => {
  for (const server of servers) server.close();
  await issuer.close();
});

/** A Koa app of a few lines: every route authenticated, /orders and /admin with rules. */
async function start(options: Partial<ResourceServerOptions> = {}): Promise<string> {
  const auth = createResourceServer({
    issuer: issuer.issuer,
    audience: TEST_API_AUDIENCE,
    jwksUri: issuer.jwksUrl,
    ...options,
  });
  const app = new Koa();
  const routes: Record<string, ReturnType<typeof koaAuth>> = {
    '/orders': koaAuth(auth, { permission: 'orders:read', scopes: ['api'] }),
    '/admin': koaAuth(auth, { stepUp: { acr: ACR.mfa, maxAgeSec: 300 } }),
  };
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

async function call(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
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

  it('checks a route permission (403 forbidden) and scopes (403 with insufficient_scope)', async () => {
    const viewer = await issuer.tokenFor({ sub: 'user-1', roles: ['viewer'] });
    expect((await call(`${base}/orders`, bearer(viewer))).status).toBe(200);
    const nobody = await issuer.tokenFor({ sub: 'user-2', roles: [] });
    const denied = await call(`${base}/orders`, bearer(nobody));
    expect(denied).toMatchObject({ status: 403, challenge: null, body: { error: 'forbidden' } });
    expect(Object.keys(denied.body)).toEqual(['error']);
    const narrow = await issuer.tokenFor({
      sub: 'user-1',
      roles: ['viewer'],
      scope: 'orders:read',
    });
    const res = await call(`${base}/orders`, bearer(narrow));
    expect(res).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(res.challenge).toMatch(
      /^Bearer realm="portcullis", error="insufficient_scope", scope="api"/,
    );
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
    const table = new Map<string, string[]>([['auditor', ['orders:read']]]);
    const roles = { version: 1, permissionsOf: (role: string) => table.get(role) };
    const base = await start({ roles });
    const token = await issuer.tokenFor({ sub: 'user-1', roles: ['auditor'] });
    expect((await call(`${base}/orders`, bearer(token))).status).toBe(200);
    // The built-in roles are not consulted once a source is given.
    const viewer = await issuer.tokenFor({ sub: 'user-2', roles: ['viewer'] });
    expect((await call(`${base}/orders`, bearer(viewer))).status).toBe(403);

    table.set('auditor', []);
    roles.version = 2;
    expect(await call(`${base}/orders`, bearer(token))).toMatchObject({
      status: 403,
      body: { error: 'forbidden' },
    });
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

it('fits real Express and Koa apps without casts (compile-time)', () => {
  // Type-checked only: the structural types of the adapters accept the frameworks' own.
  const check = (auth: ReturnType<typeof createResourceServer>) => {
    const app = express();
    app.use(expressAuth(auth));
    app.get('/x', expressAuth(auth, { stepUp: { acr: ACR.mfa } }), (req, res) => {
      res.json({ subject: req.auth?.principal.subject });
    });
    new Koa().use(koaAuth(auth, { permission: 'orders:read' }));
  };
  expect(typeof check).toBe('function');
});
