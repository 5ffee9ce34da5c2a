import { describe, expect, it } from '@jest/globals';
import { ConfigError, parseApiConfig } from './config.js';

describe('api config', () => {
  it('derives the JWKS URL from the issuer and defaults the audience', () => {
    const config = parseApiConfig({ ISSUER: 'https://auth.example.com' });
    expect(config.jwksUrl).toBe('https://auth.example.com/.well-known/jwks.json');
    expect(config.audience).toBe('http://localhost:3000');
    expect(config.port).toBe(3000);
    expect(config.corsOrigins).toEqual([]);
  });

  it('names each invalid variable', () => {
    const error = (() => {
      try {
        parseApiConfig({ API_PORT: '70000', REDIS_URL: 'http://x', TRUST_PROXY: 'yes' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'API_PORT',
      'REDIS_URL',
      'TRUST_PROXY',
    ]);
  });

  it('lists every production problem at once', () => {
    let error: unknown;
    try {
      parseApiConfig({ NODE_ENV: 'production' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'ISSUER: must be https in production',
      'UPLOAD_SIGNING_KEY: required in production',
    ]);
  });

  it('enforces step-up by default, and refuses STEP_UP=off in production', () => {
    expect(parseApiConfig({}).stepUp).toEqual({
      enforced: true,
      maxAgeSec: 300,
      paymentAmount: 50_000,
    });
    expect(parseApiConfig({ STEP_UP: 'off' }).stepUp.enforced).toBe(false);
    let error: unknown;
    try {
      parseApiConfig({
        NODE_ENV: 'production',
        ISSUER: 'https://auth.example.com',
        UPLOAD_SIGNING_KEY: 'k'.repeat(32),
        STEP_UP: 'off',
      });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual(['STEP_UP: off is not allowed in production']);
  });

  it('splits CORS origins', () => {
    expect(parseApiConfig({ CORS_ORIGINS: 'http://a.test, http://b.test' }).corsOrigins).toEqual([
      'http://a.test',
      'http://b.test',
    ]);
  });
});

describe('upload store', () => {
  const problems = (env: Record<string, string>) => {
    try {
      parseApiConfig(env);
      return [];
    } catch (e) {
      return (e as ConfigError).problems;
    }
  };

  it('is local disk by default, S3 with UPLOADS_STORE=s3 and a bucket', () => {
    expect(parseApiConfig({}).uploads).toMatchObject({ store: 'disk', s3: undefined });
    expect(
      parseApiConfig({
        UPLOADS_STORE: 's3',
        S3_BUCKET: 'portcullis-uploads',
        S3_ENDPOINT: 'http://minio:9000',
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: 'portcullis',
        S3_SECRET_ACCESS_KEY: 'a-secret',
      }).uploads.s3,
    ).toEqual({
      bucket: 'portcullis-uploads',
      region: 'us-east-1',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'portcullis', secretAccessKey: 'a-secret' },
    });
    // No keys: the AWS SDK's default chain (instance role, AWS_* variables).
    expect(
      parseApiConfig({ UPLOADS_STORE: 's3', S3_BUCKET: 'b-1', S3_REGION: 'eu-west-1' }).uploads.s3,
    ).toMatchObject({ region: 'eu-west-1', credentials: undefined, forcePathStyle: false });
  });

  it('names the variable of every inconsistent setting', () => {
    expect(problems({ UPLOADS_STORE: 's3' })).toEqual([
      'S3_BUCKET: required with UPLOADS_STORE=s3',
    ]);
    expect(problems({ S3_BUCKET: 'uploads' })).toEqual([
      'UPLOADS_STORE: is disk while S3_BUCKET is set; set UPLOADS_STORE=s3',
    ]);
    expect(problems({ UPLOADS_STORE: 's3', S3_BUCKET: 'b-1', S3_ACCESS_KEY_ID: 'id' })).toEqual([
      'S3_SECRET_ACCESS_KEY: required with S3_ACCESS_KEY_ID',
    ]);
    expect(
      problems({ UPLOADS_STORE: 'nfs', S3_BUCKET: 'Not_A_Bucket', S3_ENDPOINT: 'ftp://x' }).map(
        (p) => p.split(':')[0],
      ),
    ).toEqual(['UPLOADS_STORE', 'S3_BUCKET', 'S3_ENDPOINT']);
  });

  it('refuses placeholder secrets in production, naming each', () => {
    expect(
      problems({
        NODE_ENV: 'production',
        ISSUER: 'https://auth.example.com',
        UPLOAD_SIGNING_KEY: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_SECRET',
        UPLOADS_STORE: 's3',
        S3_BUCKET: 'uploads',
        S3_ACCESS_KEY_ID: 'portcullis',
        S3_SECRET_ACCESS_KEY: 'minio123',
        DATABASE_URL: 'postgres://portcullis:CHANGE_ME@postgres:5432/portcullis',
      }).map((p) => p.split(':')[0]),
    ).toEqual(['UPLOAD_SIGNING_KEY', 'S3_SECRET_ACCESS_KEY', 'DATABASE_URL']);
  });
});
