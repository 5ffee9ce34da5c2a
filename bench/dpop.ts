/**
 * DPoP proofs for the benchmark's load generator, signed with node:crypto (ES256). Each
 * request needs a proof of its own (the API accepts a `jti` once), so a pool is signed
 * before each measured run: signing during the run would bill the load generator's CPU,
 * on the same two cores, to the DPoP figure.
 */
import {
  createHash,
  generateKeyPairSync,
  randomBytes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

export interface DpopKey {
  /** RFC 7638 thumbprint: the token's `cnf.jkt`. */
  jkt: string;
  /** For measuring a verification alone (verificationCpuUs). */
  publicKey: KeyObject;
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
    publicKey,
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

/**
 * CPU µs of one proof's signature check alone, the least a DPoP request must add: node:crypto
 * with the imported key and the signature already in DER (what packages/claims does), median
 * of five passes over `proofs`.
 */
export function verificationCpuUs(key: DpopKey, proofs: readonly string[]): number {
  const inputs = proofs.map((proof) => {
    const dot = proof.lastIndexOf('.');
    const raw = Buffer.from(proof.slice(dot + 1), 'base64url');
    return { signed: Buffer.from(proof.slice(0, dot)), signature: der(raw) };
  });
  const batches: number[] = [];
  for (let round = 0; round < 5; round++) {
    const start = process.cpuUsage();
    for (const { signed, signature } of inputs) {
      if (!verify('sha256', signed, key.publicKey, signature)) throw new Error('bad proof');
    }
    const used = process.cpuUsage(start);
    batches.push((used.user + used.system) / inputs.length);
  }
  return batches.sort((a, b) => a - b)[2]!;
}

/** An IEEE P1363 ECDSA signature (r ‖ s) as DER. */
function der(signature: Buffer): Buffer {
  const integer = (bytes: Buffer) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const rest = bytes.subarray(start);
    return rest[0]! & 0x80 ? Buffer.concat([Buffer.of(0), rest]) : rest;
  };
  const half = signature.length / 2;
  const r = integer(signature.subarray(0, half));
  const s = integer(signature.subarray(half));
  return Buffer.concat([
    Buffer.of(0x30, r.length + s.length + 4, 0x02, r.length),
    r,
    Buffer.of(0x02, s.length),
    s,
  ]);
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
    /** `count` proofs for a measurement outside the pool. */
    sample(count: number): string[] {
      return Array.from({ length: count }, () => key.proof('GET', url, { ath }));
    },
  };
}
