import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '@portcullis/observability';
import { checkedKey, STORAGE_KEY, type BlobStorage } from './storage.js';

/** HMAC-SHA256 over method, path, expiry and size cap; constant-time comparison. */
export interface UrlSigner {
  sign(input: SignedFields): Promise<string>;
  verify(input: SignedFields & { sig: string }): Promise<boolean>;
}

export interface SignedFields {
  method: 'PUT';
  path: string;
  expires: string;
  maxBytes: number;
}

export function createUrlSigner(key: () => Promise<Buffer>, now: () => number): UrlSigner {
  const mac = async (f: SignedFields) =>
    createHmac('sha256', await key())
      .update(`portcullis-upload\n${f.method}\n${f.path}\n${f.expires}\n${f.maxBytes}`)
      .digest('base64url');

  return {
    sign: mac,
    async verify(input) {
      if (!/^\d{1,12}$/.test(input.expires)) return false;
      if (Number(input.expires) * 1000 <= now()) return false;
      return constantTimeEqual(await mac(input), input.sig);
    },
  };
}

/** Where a direct PUT of `key` goes: the API's own route, whichever store keeps the bytes. */
const directPath = (key: string) => `/uploads/direct/${key}`;

/** `presignPut`/`verifyPresigned` of every store: the API receives the direct PUT itself. */
export function directUploadUrls(
  signer: UrlSigner,
  now: () => number,
): Pick<BlobStorage, 'presignPut' | 'verifyPresigned'> {
  return {
    async presignPut(input) {
      const expiresAt = new Date(Math.floor(now() / 1000) * 1000 + input.ttlSec * 1000);
      const expires = String(expiresAt.getTime() / 1000);
      const urlPath = directPath(checkedKey(input.key));
      const sig = await signer.sign({
        method: 'PUT',
        path: urlPath,
        expires,
        maxBytes: input.maxBytes,
      });
      return { url: `${urlPath}?expires=${expires}&sig=${sig}`, method: 'PUT', expiresAt };
    },
    verifyPresigned(input) {
      if (!STORAGE_KEY.test(input.key)) return Promise.resolve(false);
      return signer.verify({ method: 'PUT', path: directPath(input.key), ...input });
    },
  };
}
