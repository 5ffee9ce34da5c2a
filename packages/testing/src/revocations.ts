import { EventEmitter } from 'node:events';
import { createSharedDenyList, type Db } from '@portcullis/db';
import { rethrow } from './poll.js';

/**
 * Writes a logout-everywhere of `subject` as another process would: a row in the shared
 * revocations table only (a bus of its own, so nothing in this process hears of it).
 */
export async function denySubjectElsewhere(db: Db, subject: string, ttlSec = 3600): Promise<void> {
  const elsewhere = createSharedDenyList({ db, onError: rethrow, bus: new EventEmitter() });
  const at = Date.now() / 1000;
  try {
    await elsewhere.denySubject(subject, at, Math.ceil(at) + ttlSec);
  } finally {
    await elsewhere.close();
  }
}
