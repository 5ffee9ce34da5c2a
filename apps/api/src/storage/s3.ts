import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { pipeline, type Readable } from 'node:stream';
import type { S3Settings } from '../config.js';
import { checkedKey, meterBlob, type BlobStorage, type StoredBlob } from './storage.js';
import { directUploadUrls, type UrlSigner } from './presign.js';

/** Bytes buffered per part (S3's smallest part), and parts in flight per upload. */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 2;

/** The client for S3_* (README "Deploying"): explicit keys, else the SDK's default chain. */
export function createS3Client(s3: S3Settings): S3Client {
  return new S3Client({
    region: s3.region,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    forcePathStyle: s3.forcePathStyle,
    // A copy: the SDK marks the object it is given, and the configuration's is frozen.
    ...(s3.credentials ? { credentials: { ...s3.credentials } } : {}),
    // Checksums only where S3 requires them: some S3-compatible servers refuse CRC32 trailers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** One shared bucket; a refused upload is aborted. Expire incomplete multipart uploads too. */
export class S3Storage implements BlobStorage {
  readonly presignPut: BlobStorage['presignPut'];
  readonly verifyPresigned: BlobStorage['verifyPresigned'];

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    signer: UrlSigner,
    now: () => number,
  ) {
    ({ presignPut: this.presignPut, verifyPresigned: this.verifyPresigned } = directUploadUrls(
      signer,
      now,
    ));
  }

  async put(key: string, source: Readable, options: { maxBytes: number }): Promise<StoredBlob> {
    const target = checkedKey(key);
    const { meter, blob } = meterBlob(options.maxBytes);
    let streamError: unknown;
    // The source's own failure (a client gone mid-body) or the cap's ends the upload too.
    const body = pipeline(source, meter, (error) => {
      if (error) streamError = error;
    });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: target, Body: body },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      body.destroy();
      throw streamError ?? error;
    }
    if (streamError) {
      await this.delete(key);
      throw streamError;
    }
    return blob();
  }

  async get(key: string): Promise<Readable> {
    const object = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: checkedKey(key) }),
    );
    return object.Body as Readable;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkedKey(key) }));
  }
}
