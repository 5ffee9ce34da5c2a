import { availableParallelism } from 'node:os';
import argon2 from 'argon2';
import pLimit from 'p-limit';

/** OWASP Password Storage Cheat Sheet minimum for argon2id: m=19 MiB, t=2, p=1. */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

// One hash per core, the rest queued (docs/performance.md "Password hashing, one per core").
const argon2Slots = pLimit(availableParallelism());

export function hashPassword(password: string): Promise<string> {
  return argon2Slots(() => argon2.hash(password, ARGON2_OPTIONS));
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2Slots(() => argon2.verify(hash, password));
  } catch {
    return false;
  }
}

/** Hashes running now and waiting for a core (for tests and diagnostics). */
export function passwordHashing(): { running: number; waiting: number; slots: number } {
  return {
    running: argon2Slots.activeCount,
    waiting: argon2Slots.pendingCount,
    slots: argon2Slots.concurrency,
  };
}
