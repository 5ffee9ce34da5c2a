import { TEST_API_AUDIENCE } from '@portcullis/testing';
import { CompactSign, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';

export const ISSUER = 'http://localhost:4000';
export const AUDIENCE = TEST_API_AUDIENCE;
/** Frozen test time, milliseconds. */
export const NOW = 1_750_000_000_000;
export const NOW_SEC = NOW / 1000;

export interface TestKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function makeKey(alg: 'RS256' | 'ES256', kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

export const b64 = (value: unknown): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

export function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'user-1',
    client_id: 'spa',
    scope: 'openid api',
    roles: ['editor'],
    iat: NOW_SEC - 10,
    exp: NOW_SEC + 890,
    jti: 'jti-1',
    ...overrides,
  };
}

/** Signs any header/payload combination (the header is used as given). */
export async function sign(
  key: CryptoKey | Uint8Array,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader(header as { alg: string })
    .sign(key);
}

/** A correct access token from `key`, with header/payload overrides. */
export function mint(
  key: TestKey,
  payload: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return sign(
    key.privateKey,
    { alg: key.alg, typ: 'at+jwt', kid: key.kid, ...header },
    claims(payload),
  );
}

export { startJwksServer, type JwksServer } from '@portcullis/testing';
