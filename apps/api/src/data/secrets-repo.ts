import { randomBytes } from 'node:crypto';
import type { ApiSecretRow, Db } from '@portcullis/db';

export interface SecretsRepo {
  /** The named 256-bit secret, created on first use and shared by every API instance. */
  get(name: string): Promise<Buffer>;
}

export function createSecretsRepo(db: Db): SecretsRepo {
  const cache = new Map<string, Promise<Buffer>>();
  async function load(name: string): Promise<Buffer> {
    // Two instances racing both insert; the conflict keeps the first, and both read it.
    await db('api_secrets')
      .insert({ name, value: randomBytes(32).toString('base64url') })
      .onConflict('name')
      .ignore();
    const row = await db<ApiSecretRow>('api_secrets').where({ name }).first();
    if (!row) throw new Error(`secret ${name} missing after insert`);
    return Buffer.from(row.value, 'base64url');
  }
  return {
    get(name) {
      let secret = cache.get(name);
      if (!secret) {
        secret = load(name);
        secret.catch(() => cache.delete(name));
        cache.set(name, secret);
      }
      return secret;
    },
  };
}
