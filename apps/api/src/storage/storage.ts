import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';

/** Where uploaded bytes live; keys are server-generated, never a client's file name. */
export interface StoredBlob {
  size: number;
  sha256: string;
}

export interface PresignedPut {
  url: string;
  method: 'PUT';
  expiresAt: Date;
}

export interface PresignInput {
  key: string;
  ttlSec: number;
  maxBytes: number;
}

/** Thrown by `put` when the stream passes maxBytes; the partial object is already gone. */
export class BlobTooLargeError extends Error {
  override name = 'BlobTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
  }
}

export interface BlobStorage {
  put(key: string, source: Readable, options: { maxBytes: number }): Promise<StoredBlob>;
  get(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
  presignPut(input: PresignInput): Promise<PresignedPut>;
  /** True when a direct PUT's query (`expires`, `sig`) was signed for `key` and `maxBytes` and is unexpired. */
  verifyPresigned(input: {
    key: string;
    maxBytes: number;
    expires: string;
    sig: string;
  }): Promise<boolean>;
}

/** Keys are ours (random ids), but a key is still checked before it names a file or an object. */
export const STORAGE_KEY = /^[A-Za-z0-9_-]{1,128}$/;

export function checkedKey(key: string): string {
  if (!STORAGE_KEY.test(key)) throw new Error('invalid storage key');
  return key;
}

/** Counts and hashes the bytes of a put; fails with BlobTooLargeError past `maxBytes`. */
export function meterBlob(maxBytes: number): { meter: Transform; blob(): StoredBlob } {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes) return callback(new BlobTooLargeError(maxBytes));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  return { meter, blob: () => ({ size, sha256: hash.digest('hex') }) };
}
