import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes, base64url: 43 characters, 256 bits (session ids and API keys). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** SHA-256, hex. Secrets are high-entropy, so a plain hash (no salt, no KDF) is enough. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Exactly the shape `newSecret` produces; checked before anything touches the database. */
export const SECRET_BODY = /^[A-Za-z0-9_-]{43}$/;
