import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider, { type Adapter, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import * as grants from 'oidc-provider/lib/helpers/grants.js';
// @ts-expect-error: an internal module without type declarations.
import weakCache from 'oidc-provider/lib/helpers/weak_cache.js';
import {
  grantHelpers,
  registeredResponseModes,
  replaceClientSecretComparison,
  supportedScopes,
  replaceReplayDetection,
  unregisterResponseMode,
  wrapAccessTokenFind,
  wrapClientFind,
} from '../src/oauth/internals.js';
import { claimJtiOnce } from '../src/oauth/replay-detection.js';
import { currentRequest } from '../src/data/request-memo.js';

// What oauth/internals.ts relies on in oidc-provider, each checked on a bare provider (no
// Portcullis configuration), so an upgrade that changes one fails here first (docs/oidc-provider.md).

const SECRET = 'a-client-secret-long-enough-for-hs256-0123456789';
const REDIRECT = 'https://rp.example/cb';
const CUSTOM_GRANT = 'urn:portcullis:test:internals';

/** oidc-provider's adapter interface on a Map: the documented way it stores its models. */
function memoryAdapter(): new (name: string) => Adapter {
  const rows = new Map<string, unknown>();
  return class MemoryAdapter implements Adapter {
    constructor(private readonly name: string) {}
    private key = (id: string) => `${this.name}:${id}`;
    async upsert(id: string, payload: object) {
      rows.set(this.key(id), payload);
    }
    async find(id: string) {
      return rows.get(this.key(id)) as never;
    }
    async findByUserCode() {
      return undefined;
    }
    async findByUid() {
      return undefined;
    }
    async consume() {}
    async destroy(id: string) {
      rows.delete(this.key(id));
    }
    async revokeByGrantId() {}
  };
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A provider with one confidential client, DPoP and client credentials, listening locally. */
async function bareProvider(setUp: (provider: Provider) => void = () => {}, customGrant = false) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  server = createServer();
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const configuration: Configuration = {
    adapter: memoryAdapter(),
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig' }] as never },
    clients: [
      {
        client_id: 'internals',
        client_secret: SECRET,
        grant_types: [
          'client_credentials',
          'authorization_code',
          ...(customGrant ? [CUSTOM_GRANT] : []),
        ],
        redirect_uris: [REDIRECT],
        response_types: ['code'],
      },
    ],
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      dPoP: { enabled: true },
    },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  };
  const provider = new Provider(issuer, configuration);
  setUp(provider);
  server.on('request', provider.callback());
  return { provider, issuer };
}

const basic = (secret = SECRET) =>
  `Basic ${Buffer.from(`internals:${encodeURIComponent(secret)}`).toString('base64')}`;

async function token(issuer: string, body: Record<string, string>, headers = {}) {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: basic(), ...headers },
    body: new URLSearchParams(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function dpopProof(issuer: string) {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return new SignJWT({ htm: 'POST', htu: `${issuer}/token`, jti: randomUUID() })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
    .setIssuedAt()
    .sign(privateKey);
}

describe('Client.find (wrapClientFind)', () => {
  test('is a static method of one argument', async () => {
    const { provider } = await bareProvider();
    expect(typeof provider.Client.find).toBe('function');
    expect(provider.Client.find.length).toBe(1);
  });

  test('the wrapper is called on /token, inside the request (Provider.ctx), and can refuse', async () => {
    const seen: { id: string; route: unknown }[] = [];
    let refuse = false;
    const { provider, issuer } = await bareProvider((p) =>
      wrapClientFind(p, (id, find) => {
        const ctx = currentRequest() as KoaContextWithOIDC | undefined;
        seen.push({ id, route: ctx?.oidc?.route });
        return refuse ? Promise.resolve(undefined) : find(id);
      }),
    );
    expect((await token(issuer, { grant_type: 'client_credentials' })).status).toBe(200);
    expect(seen).toContainEqual({ id: 'internals', route: 'token' });
    refuse = true;
    const refused = await token(issuer, { grant_type: 'client_credentials' });
    expect({ status: refused.status, error: refused.body['error'] }).toEqual({
      status: 401,
      error: 'invalid_client',
    });
    expect(() => wrapClientFind(provider, (id, find) => find(id))).toThrow('once');
  });
});

describe('Client#compareClientSecret (replaceClientSecretComparison)', () => {
  test('is a method of one argument on the Client prototype', async () => {
    const { provider } = await bareProvider();
    expect(typeof provider.Client.prototype.compareClientSecret).toBe('function');
    expect(provider.Client.prototype.compareClientSecret.length).toBe(1);
  });

  test('decides client_secret_basic at /token, given the stored secret as this.clientSecret', async () => {
    const calls: [string | undefined, string][] = [];
    const { issuer } = await bareProvider((p) =>
      replaceClientSecretComparison(p, function (this: { clientSecret?: string }, presented) {
        calls.push([this.clientSecret, presented]);
        return presented === 'the-right-one';
      }),
    );
    const ok = await token(
      issuer,
      { grant_type: 'client_credentials' },
      { authorization: basic('the-right-one') },
    );
    expect(ok.status).toBe(200);
    expect(calls).toEqual([[SECRET, 'the-right-one']]);
    // The stored value itself is no longer accepted: only the replacement decides.
    const refused = await token(issuer, { grant_type: 'client_credentials' });
    expect({ status: refused.status, error: refused.body['error'] }).toEqual({
      status: 401,
      error: 'invalid_client',
    });
  });
});

describe('ReplayDetection.unique (replaceReplayDetection)', () => {
  test('is a static method of three arguments (iss, jti, exp)', async () => {
    const { provider } = await bareProvider();
    expect(typeof provider.ReplayDetection.unique).toBe('function');
    expect(provider.ReplayDetection.unique.length).toBe(3);
  });

  test('is asked for each DPoP proof at /token with the client and the proof jti; false refuses', async () => {
    const calls: [string, string, number][] = [];
    const { issuer } = await bareProvider((p) =>
      replaceReplayDetection(p, async (iss, jti, exp) => {
        calls.push([iss, jti, exp]);
        return false;
      }),
    );
    const proof = await dpopProof(issuer);
    const refused = await token(issuer, { grant_type: 'client_credentials' }, { dpop: proof });
    expect({ status: refused.status, error: refused.body['error'] }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
    const jti = JSON.parse(Buffer.from(proof.split('.')[1]!, 'base64url').toString()).jti;
    expect(calls).toEqual([['internals', jti, expect.any(Number)]]);
  });

  test('claimJtiOnce: a replayed proof is refused with invalid_dpop_proof, a fresh one passes', async () => {
    const claimed = new Set<string>();
    const { issuer } = await bareProvider((p) =>
      claimJtiOnce(p, {
        claimJtiOnce: async (iss, jti) =>
          !claimed.has(`${iss} ${jti}`) && !!claimed.add(`${iss} ${jti}`),
      }),
    );
    const proof = await dpopProof(issuer);
    const first = await token(issuer, { grant_type: 'client_credentials' }, { dpop: proof });
    expect({ status: first.status, type: first.body['token_type'] }).toEqual({
      status: 200,
      type: 'DPoP',
    });
    const replay = await token(issuer, { grant_type: 'client_credentials' }, { dpop: proof });
    expect({ status: replay.status, error: replay.body['error'] }).toEqual({
      status: 400,
      error: 'invalid_dpop_proof',
    });
  });
});

describe('AccessToken.find (wrapAccessTokenFind)', () => {
  test('is a static method', async () => {
    const { provider } = await bareProvider();
    expect(typeof provider.AccessToken.find).toBe('function');
  });

  test("/me resolves its bearer token through it, on the 'userinfo' route", async () => {
    const seen: { value: string; route: unknown }[] = [];
    const { provider, issuer } = await bareProvider((p) =>
      wrapAccessTokenFind(p, async (value, options, find) => {
        const ctx = currentRequest() as KoaContextWithOIDC | undefined;
        seen.push({ value, route: ctx?.oidc?.route });
        if (value !== 'a.foreign.jwt') return find(value, options);
        const grant = new p.Grant({ accountId: 'user-1', clientId: 'internals' });
        grant.addOIDCScope('openid');
        const now = Math.floor(Date.now() / 1000);
        return new p.AccessToken({
          jti: randomUUID(),
          iat: now,
          exp: now + 60,
          accountId: 'user-1',
          clientId: 'internals',
          grantId: await grant.save(),
          scope: 'openid',
        } as never);
      }),
    );
    expect(provider).toBeDefined();
    const me = (authorization: string) =>
      fetch(`${issuer}/me`, { headers: { authorization } }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as Record<string, unknown>,
      }));
    expect(await me('Bearer a.foreign.jwt')).toEqual({ status: 200, body: { sub: 'user-1' } });
    expect(seen).toContainEqual({ value: 'a.foreign.jwt', route: 'userinfo' });
    // Anything else still goes to oidc-provider's own lookup.
    expect((await me('Bearer unknown-opaque-token')).status).toBe(401);
  });
});

describe('the response-mode registry (unregisterResponseMode)', () => {
  test("weak_cache's default export is the provider's internals, with a Map of response modes", async () => {
    const { provider } = await bareProvider();
    expect(typeof weakCache).toBe('function');
    expect(weakCache(provider).responseModes).toBeInstanceOf(Map);
    expect(registeredResponseModes(provider).sort()).toEqual(['form_post', 'fragment', 'query']);
  });

  test('a mode taken out is refused with unsupported_response_mode in the redirect query', async () => {
    const { provider, issuer } = await bareProvider((p) => unregisterResponseMode(p, 'form_post'));
    expect(registeredResponseModes(provider)).not.toContain('form_post');
    const url = new URL(`${issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: 'internals',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      response_mode: 'form_post',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe('unsupported_response_mode');
  });
});

describe('the supported scopes (supportedScopes)', () => {
  test('a scope added to the Set later is in discovery and allowed in client metadata at once', async () => {
    const { provider, issuer } = await bareProvider();
    const scopes = supportedScopes(provider);
    expect(scopes).toBeInstanceOf(Set);
    expect(scopes.has('openid')).toBe(true);
    const discovered = async () =>
      (
        (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
          scopes_supported: string[];
        }
      ).scopes_supported;
    expect(await discovered()).not.toContain('invoices:read');
    await expect(
      provider.Client.validate({
        client_id: 'later',
        client_secret: SECRET,
        redirect_uris: [REDIRECT],
        scope: 'invoices:read',
      }),
    ).rejects.toMatchObject({
      error: 'invalid_client_metadata',
      error_description: expect.stringMatching(/scope must only contain/),
    });
    scopes.add('invoices:read');
    expect(await discovered()).toContain('invoices:read');
    await provider.Client.validate({
      client_id: 'later',
      client_secret: SECRET,
      redirect_uris: [REDIRECT],
      scope: 'invoices:read',
    });
    scopes.delete('invoices:read');
    expect(await discovered()).not.toContain('invoices:read');
  });
});

describe('lib/helpers/grants.js (grantHelpers)', () => {
  test('exports the four helpers with the arities token-exchange.ts calls them with', () => {
    expect(grantHelpers.validateDpop).toBe(grants.validateDpop);
    expect(grants.validateDpop.length).toBe(3);
    expect(grants.checkDpopRequired.length).toBe(3);
    expect(grants.checkDpopReplay.length).toBe(4);
    expect(typeof grants.buildTokenResponse).toBe('function');
  });

  test('a grant registered with them answers like /token: DPoP-bound, a replayed proof refused', async () => {
    const { issuer } = await bareProvider(
      (p) =>
        p.registerGrantType(CUSTOM_GRANT, async (ctx) => {
          const dPoP = await grantHelpers.validateDpop(p, ctx);
          grantHelpers.checkDpopRequired(p, ctx, dPoP);
          const accessToken = new p.AccessToken({
            clientId: ctx.oidc.client.clientId,
            accountId: 'user-1',
            scope: 'openid',
          } as never);
          if (dPoP) {
            await grantHelpers.checkDpopReplay(p, ctx, dPoP, ctx.oidc.client.clientId);
            accessToken.setThumbprint('jkt', dPoP.thumbprint);
          }
          const value = await accessToken.save();
          ctx.body = grantHelpers.buildTokenResponse(p, {
            accessToken: value,
            expiresIn: accessToken.expiration,
            scope: accessToken.scope,
            tokenType: accessToken.tokenType,
          });
        }),
      true,
    );
    const proof = await dpopProof(issuer);
    const first = await token(issuer, { grant_type: CUSTOM_GRANT }, { dpop: proof });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      access_token: expect.any(String),
      token_type: 'DPoP',
      expires_in: expect.any(Number),
      scope: 'openid',
    });
    const replay = await token(issuer, { grant_type: CUSTOM_GRANT }, { dpop: proof });
    expect({ status: replay.status, error: replay.body['error'] }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });
});
