// TEST ISSUER, not the auth server: for tokens the real one never issues (expired, foreign, unknown kid).
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** A JWKS endpoint on 127.0.0.1:0 that counts its requests; `keys` and `status` may change. */
export interface JwksServer {
  url: string;
  origin: string;
  keys: JWK[];
  requests: number;
  status: number;
  close(): Promise<void>;
}

export async function startJwksServer(keys: JWK[]): Promise<JwksServer> {
  const state = { keys, requests: 0, status: 200 };
  const server: Server = createServer((_req, res) => {
    state.requests += 1;
    res.writeHead(state.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    url: `${origin}/.well-known/jwks.json`,
    origin,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  });
}

export interface TokenOptions {
  sub: string;
  roles?: string[];
  /** Default `api` (all role permissions). */
  scope?: string;
  clientId?: string;
  email?: string;
  grantId?: string;
  /** Seconds; default 900. Negative values make an expired token. */
  expiresIn?: number;
  /** Claim overrides (e.g. aud, iss), applied last. */
  claims?: Record<string, unknown>;
  /** Header overrides (e.g. typ, kid). */
  header?: Record<string, unknown>;
}

export interface TestIssuer {
  /** Exact `iss` of the tokens. */
  issuer: string;
  jwksUrl: string;
  audience: string;
  tokenFor(options: TokenOptions): Promise<string>;
  /** Signs arbitrary header + payload with the issuer key (for rejection tests). */
  signRaw(header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(options: { audience: string }): Promise<TestIssuer> {
  const kid = `test-${randomUUID().slice(0, 8)}`;
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const jwks = await startJwksServer([jwk]);
  const issuer = jwks.origin;
  const { audience } = options;

  async function tokenFor(t: TokenOptions): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = t.expiresIn ?? 900;
    const iat = expiresIn < 0 ? now + expiresIn - 900 : now;
    const payload: Record<string, unknown> = {
      iss: issuer,
      aud: audience,
      sub: t.sub,
      iat,
      exp: now + expiresIn,
      client_id: t.clientId ?? 'test-spa',
      scope: t.scope ?? 'api',
      roles: t.roles ?? [],
      jti: randomUUID(),
      ...(t.email ? { email: t.email } : {}),
      ...(t.grantId ? { grant_id: t.grantId } : {}),
      ...t.claims,
    };
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid, ...t.header })
      .sign(privateKey as CryptoKey);
  }

  return {
    issuer,
    jwksUrl: jwks.url,
    audience,
    tokenFor,
    signRaw: (header, payload) =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
        .setProtectedHeader(header as { alg: string })
        .sign(privateKey as CryptoKey),
    close: () => jwks.close(),
  };
}
