import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * HMAC-SHA256 signatures of direct-upload URLs. What is signed: method, path, expiry
 * and the size cap, so none of them can be changed without breaking the signature;
 * the expiry is checked against the injected clock. Comparison is constant-time.
 */
export interface UrlSigner {
  sign(input: SignedFields): Promise<string>;
  verify(input: SignedFields & { sig: string }): Promise<boolean>;
}

export interface SignedFields {
  method: 'PUT';
  path: string;
  /** Unix seconds, as it appears in the URL. */
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
      const expected = Buffer.from(await mac(input));
      const given = Buffer.from(input.sig);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
