/**
 * DPoP proofs for the benchmark's load generator, signed with node:crypto (ES256). Each
 * request needs a proof of its own (the API accepts a `jti` once), so a pool is signed
 * before each measured run: signing during the run would bill the load generator's CPU,
 * on the same two cores, to the DPoP figure.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface DpopKey {
  /** RFC 7638 thumbprint: the token's `cnf.jkt`. */
  jkt: string;
  /** A proof for one request. */
  proof(htm: string, htu: string, extra?: { ath?: string; nonce?: string }): string;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
export const athOf = (token: string) => createHash('sha256').update(token).digest('base64url');

export function createDpopKey(): DpopKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { crv, kty, x, y } = publicKey.export({ format: 'jwk' });
  const header = b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { crv, kty, x, y } });
  const jkt = createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
  const prefix = randomBytes(8).toString('base64url');
  let counter = 0;
  return {
    jkt,
    proof(htm, htu, extra = {}) {
      const payload = b64({
        htm,
        htu,
        iat: Math.floor(Date.now() / 1000),
        jti: `${prefix}.${++counter}`,
        ...extra,
      });
      return `${header}.${payload}.${signEs256(privateKey, `${header}.${payload}`)}`;
    },
  };
}

function signEs256(key: KeyObject, input: string): string {
  return sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString(
    'base64url',
  );
}

/** Proofs for GET `url` with `token`, signed ahead in batches; a run that outlasts a batch signs on demand. */
export function proofPool(key: DpopKey, url: string, token: string) {
  const ath = athOf(token);
  let pool: string[] = [];
  return {
    fill(count: number): void {
      pool = Array.from({ length: count }, () => key.proof('GET', url, { ath }));
    },
    next(): string {
      return pool.pop() ?? key.proof('GET', url, { ath });
    },
  };
}
