import { createHash } from 'node:crypto';
import type { Db } from '@portcullis/db';

/** Seconds a too-early poll adds to its device code's interval (RFC 8628 §3.5). */
export const SLOW_DOWN_STEP = 5;

export interface PollRecord {
  /** The poll came earlier than the device code's interval allows. */
  slow: boolean;
  /** The device code's interval after this poll, in seconds. */
  interval: number;
}

export interface DevicePollsRepo {
  /** Records one poll of a device code; a code's first poll starts at `intervalSeconds`. */
  record(deviceCode: string, intervalSeconds: number): Promise<PollRecord>;
}

const hashCode = (deviceCode: string) => createHash('sha256').update(deviceCode).digest('hex');

/** Poll times keyed by the device code's SHA-256, one atomic upsert per poll (all instances). */
export function createDevicePollsRepo(db: Db): DevicePollsRepo {
  return {
    async record(deviceCode, intervalSeconds) {
      const result = await db.raw(
        `insert into device_polls (id, last_poll_at, interval_s, slow, expires_at)
         values (?, now(), ?, false, now() + interval '1 hour')
         on conflict (id) do update set
           slow = device_polls.last_poll_at > now() - device_polls.interval_s * interval '1 second',
           interval_s = case
             when device_polls.last_poll_at > now() - device_polls.interval_s * interval '1 second'
             then device_polls.interval_s + ? else device_polls.interval_s end,
           last_poll_at = now()
         returning slow, interval_s`,
        [hashCode(deviceCode), intervalSeconds, SLOW_DOWN_STEP],
      );
      const row = (result as { rows: { slow: boolean; interval_s: number }[] }).rows[0]!;
      return { slow: row.slow, interval: row.interval_s };
    },
  };
}
