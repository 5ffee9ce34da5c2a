import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkedKey, meterBlob, type BlobStorage, type StoredBlob } from './storage.js';
import { directUploadUrls, type UrlSigner } from './presign.js';

/**
 * Files under `root` (default `${DATA_DIR}/uploads`), one per key: the store of a single
 * instance (UPLOADS_STORE=disk). A put writes a temporary file and renames it into place
 * only when complete, so a failed or oversized upload leaves nothing behind.
 */
export class LocalDiskStorage implements BlobStorage {
  readonly presignPut: BlobStorage['presignPut'];
  readonly verifyPresigned: BlobStorage['verifyPresigned'];

  constructor(
    private readonly root: string,
    signer: UrlSigner,
    now: () => number,
  ) {
    ({ presignPut: this.presignPut, verifyPresigned: this.verifyPresigned } = directUploadUrls(
      signer,
      now,
    ));
  }

  private pathOf(key: string): string {
    return path.join(this.root, checkedKey(key));
  }

  async put(key: string, source: Readable, options: { maxBytes: number }): Promise<StoredBlob> {
    const target = this.pathOf(key);
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const temporary = path.join(this.root, `.${key}.${randomUUID()}.part`);
    const { meter, blob } = meterBlob(options.maxBytes);
    try {
      await pipeline(source, meter, createWriteStream(temporary, { flags: 'wx', mode: 0o600 }));
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return blob();
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
}
