import argon2 from 'argon2';
import { exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, SignJWT } from 'jose';
import { createAccessTokenVerifier, createLocalKeySet, createTokenCache } from '@portcullis/claims';
import { measureHttp, measureOps, measureOpsInterleaved, startTarget } from './lib.js';

export interface Row {
  section: string;
  metric: string;
  value: number | string;
  goal?: string;
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/** Each section measures its figures and the ratios between them within the same run. */
export const sections: Record<string, () => Promise<Row[]>> = {
  async http() {
    const koa = await startTarget('koa-hello.ts');
    try {
      const bare = await measureHttp(koa.info['url']!);
      return [
        { section: 'http', metric: 'bare Koa req/s', value: bare.requestsPerSecond },
        { section: 'http', metric: 'bare Koa p99 ms', value: bare.p99Ms },
      ];
    } finally {
      await koa.stop();
    }
  },

  /**
   * packages/claims' verifier against bare jose.jwtVerify with the same local key set:
   * the wrapper's checks (size, syntax, typ, kid, claims schema, lifetime) should cost
   * under 10% more. The cached figure is what a repeated token costs an API request.
   */
  async verify() {
    const rows: Row[] = [];
    for (const alg of ['RS256', 'ES256'] as const) {
      const { privateKey, publicKey } = await generateKeyPair(alg);
      const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg, use: 'sig' }] };
      const issuer = 'http://localhost:4000';
      const audience = 'http://localhost:3000';
      const token = await new SignJWT({ scope: 'api', roles: ['editor'], client_id: 'spa' })
        .setProtectedHeader({ alg, kid: 'k1', typ: 'at+jwt' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject('user-1')
        .setJti('jti-1')
        .setIssuedAt()
        .setExpirationTime('15m')
        .sign(privateKey);
      const joseKeys = createLocalJWKSet(jwks);
      const wrapper = createAccessTokenVerifier({
        issuer,
        audience,
        keys: createLocalKeySet(jwks),
      });
      const [bare, wrapped] = (await measureOpsInterleaved([
        () => jwtVerify(token, joseKeys, { issuer, audience, algorithms: [alg], typ: 'at+jwt' }),
        () => wrapper.verify(token),
      ])) as [number, number];
      const cachedVerifier = createAccessTokenVerifier({
        issuer,
        audience,
        keys: createLocalKeySet(jwks),
        cache: createTokenCache(),
      });
      const cached = await measureOps(() => cachedVerifier.verify(token));
      rows.push(
        { section: 'verify', metric: `${alg} bare jose.jwtVerify/s`, value: bare },
        { section: 'verify', metric: `${alg} verifyAccessToken/s`, value: wrapped },
        {
          section: 'verify',
          metric: `${alg} wrapper cost vs bare`,
          value: `${Math.round((bare / wrapped - 1) * 100)}%`,
          goal: '< 10%',
        },
        { section: 'verify', metric: `${alg} verifyAccessToken cached/s`, value: cached },
      );
    }
    return rows;
  },

  async argon2() {
    // The same parameters packages/accounts uses (OWASP minimum for argon2id).
    const { ARGON2_OPTIONS } = await import('@portcullis/accounts');
    const hash = await argon2.hash('benchmark password', ARGON2_OPTIONS);
    const rate = await measureOps(() => argon2.verify(hash, 'benchmark password'));
    return [{ section: 'argon2', metric: 'bare argon2id verify/s (1 thread)', value: rate }];
  },
};

void ratio;
