import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AuthServerError } from './errors.js';

/** Secrets at rest: AES-256-GCM bound to `context` (docs/security.md "Secrets at rest"). */
export function seal(kek: Buffer, context: string, clear: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv).setAAD(Buffer.from(context));
  const ct = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
  return ['v1', iv, ct, cipher.getAuthTag()]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** A sealed value that is not `v1.…` at all. */
export class SealedFormatError extends AuthServerError {
  constructor(message: string) {
    super(message, { status: 500, expose: false });
  }
}

/** Opens what `seal` made; throws on another key or context, or a tampered value. */
export function open(kek: Buffer, context: string, sealed: string): string {
  const [version, iv, ct, tag] = sealed.split('.');
  if (version !== 'v1' || !iv || !ct || !tag) throw new SealedFormatError('unknown format');
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'))
    .setAAD(Buffer.from(context))
    .setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString(
    'utf8',
  );
}
