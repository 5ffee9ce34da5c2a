import type { Readable } from 'node:stream';

/**
 * Where uploaded bytes live. Keys are server-generated (never a client's file name).
 * LocalDiskStorage implements it under DATA_DIR; an S3-compatible store would map
 * `put` to a streamed PutObject and `presignPut` to a SigV4 pre-signed URL.
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
