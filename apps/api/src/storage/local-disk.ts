import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobTooLargeError, type BlobStorage, type StoredBlob } from './storage.js';
import type { UrlSigner } from './presign.js';

// Keys are ours (random ids), but a key is still checked before it becomes a path.
const KEY = /^[A-Za-z0-9_-]{1,128}$/;

function counter(
  maxBytes: number,
  hash: ReturnType<typeof createHash>,
  seen: { size: number },
): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen.size += chunk.length;
      if (seen.size > maxBytes) return callback(new BlobTooLargeError(maxBytes));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
}

/**
 * Files under `root` (default `${DATA_DIR}/uploads`), one per key. A put writes a
 * temporary file and renames it into place only when complete, so a failed or
 * oversized upload leaves nothing behind. Direct PUTs go to the API's own
 * `/uploads/direct/:id` URL, signed by `signer`.
 */
export class LocalDiskStorage implements BlobStorage {
  constructor(
    private readonly root: string,
    private readonly signer: UrlSigner,
    private readonly now: () => number,
  ) {}

  private pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error('invalid storage key');
    return path.join(this.root, key);
  }

  async put(key: string, source: Readable, options: { maxBytes: number }): Promise<StoredBlob> {
    const target = this.pathOf(key);
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const temporary = path.join(this.root, `.${key}.${randomUUID()}.part`);
    const hash = createHash('sha256');
    const seen = { size: 0 };
    try {
      await pipeline(
        source,
        counter(options.maxBytes, hash, seen),
        createWriteStream(temporary, { flags: 'wx', mode: 0o600 }),
      );
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return { size: seen.size, sha256: hash.digest('hex') };
  }

  async get(key: string): Promise<Readable> {
    const stream = createReadStream(this.pathOf(key));
    // Surface a missing file as a rejection here rather than as a stream error mid-response.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async presignPut(input: { key: string; ttlSec: number; maxBytes: number }) {
    const expiresAt = new Date(Math.floor(this.now() / 1000) * 1000 + input.ttlSec * 1000);
    const expires = String(expiresAt.getTime() / 1000);
    const urlPath = `/uploads/direct/${this.pathSafe(input.key)}`;
    const sig = await this.signer.sign({
      method: 'PUT',
      path: urlPath,
      expires,
      maxBytes: input.maxBytes,
    });
    return { url: `${urlPath}?expires=${expires}&sig=${sig}`, method: 'PUT' as const, expiresAt };
  }

  verifyPresigned(input: {
    key: string;
    maxBytes: number;
    expires: string;
    sig: string;
  }): Promise<boolean> {
    if (!KEY.test(input.key)) return Promise.resolve(false);
    return this.signer.verify({ method: 'PUT', path: `/uploads/direct/${input.key}`, ...input });
  }

  private pathSafe(key: string): string {
    if (!KEY.test(key)) throw new Error('invalid storage key');
    return key;
  }
}
