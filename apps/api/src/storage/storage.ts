import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';

/**
 * Where uploaded bytes live. Keys are server-generated (never a client's file name).
 * LocalDiskStorage keeps them under DATA_DIR (one instance); S3Storage in an S3-compatible
 * bucket every instance shares (UPLOADS_STORE=s3). Direct PUTs go to the API's own signed
 * URL with either store (presign.ts), so the size cap and the once-only rule stay the API's.
 */
export interface StoredBlob {
  size: number;
  /** Hex SHA-256 of the bytes, computed while streaming. */
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
  /** The most bytes the PUT may send. */
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
  /** Streams `source` to `key`; nothing is left at `key` unless it resolves. */
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

/**
 * A pass-through that counts and hashes the bytes of a put and fails with BlobTooLargeError
 * once they pass `maxBytes`; `blob()` is the result after the stream ended.
 */
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
