import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** AES-256-GCM cookie values bound to name and expiry (docs/security.md#the-browser-demos-cookies). */
export interface CookieSealer {
  seal(name: string, value: unknown, ttlSeconds: number): string;
  /** The sealed value, or undefined when missing, tampered with, expired or sealed for another name. */
  open(name: string, sealed: string | undefined): unknown;
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'portcullis-web', 'sealed-cookie v1', 32));
}

export function createCookieSealer(
  secrets: readonly string[],
  now: () => number = Date.now,
): CookieSealer {
  if (secrets.length === 0) throw new Error('at least one cookie key is required');
  const keys = secrets.map(deriveKey);

  return {
    seal(name, value, ttlSeconds) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keys[0]!, iv);
      cipher.setAAD(Buffer.from(name));
      const plain = JSON.stringify({ v: value, exp: Math.floor(now() / 1000) + ttlSeconds });
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
    },

    open(name, sealed) {
      if (!sealed?.startsWith(`${VERSION}.`) || sealed.length > 4096) return undefined;
      const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64url');
      if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
      const iv = raw.subarray(0, IV_BYTES);
      const body = raw.subarray(IV_BYTES, raw.length - TAG_BYTES);
      const tag = raw.subarray(raw.length - TAG_BYTES);
      for (const key of keys) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, iv);
          decipher.setAAD(Buffer.from(name));
          decipher.setAuthTag(tag);
          const plain = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
          const parsed = JSON.parse(plain) as { v: unknown; exp: number };
          return parsed.exp > Math.floor(now() / 1000) ? parsed.v : undefined;
        } catch {
          // Not this key (or tampered): try the next one.
        }
      }
      return undefined;
    },
  };
}
