/**
 * A local S3-compatible server (s3rver, from the npm registry) on 127.0.0.1 with one bucket,
 * its files in a temporary folder: the outside world's object storage, for UPLOADS_STORE=s3.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/storage/s3.js';

interface S3rver {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: { name: string }[];
}) => S3rver;

// s3rver is CommonJS without types; this is the part of it the tests use.
const S3rverServer = createRequire(import.meta.url)('s3rver') as S3rverClass;

export interface TestS3 {
  /** The API's environment for this bucket. */
  env: Record<string, string>;
  bucket: string;
  /** Every key in the bucket. */
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startTestS3(bucket = 'portcullis-uploads'): Promise<TestS3> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-s3-'));
  const server = new S3rverServer({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const env = {
    UPLOADS_STORE: 's3',
    S3_BUCKET: bucket,
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_FORCE_PATH_STYLE: 'true',
    S3_REGION: 'us-east-1',
    // s3rver's fixed credentials.
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
  };
  const client = createS3Client({
    bucket,
    region: env.S3_REGION,
    endpoint: env.S3_ENDPOINT,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    env,
    bucket,
    async keys() {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (listed.Contents ?? []).map((o) => o.Key!).sort();
    },
    async close() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
