import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DpopNonces } from './dpop.js';

export interface DpopNoncesOptions {
  /** A secret every instance shares (so any instance accepts another's nonce). */
  secret: () => Promise<Uint8Array>;
  /** A nonce is issued for this many seconds and accepted for up to twice as long. Default 300. */
  periodSec?: number;
  now?: () => number;
}

const MAC_LENGTH = 32;

/** Stateless `<period>.<HMAC>` nonces: every instance issues and accepts the same, nothing stored. */
export function createDpopNonces(options: DpopNoncesOptions): DpopNonces {
  const periodMs = (options.periodSec ?? 300) * 1000;
  const now = options.now ?? Date.now;
  let issued: { period: number; nonce: string } | undefined;

  async function macOf(period: number): Promise<string> {
    return createHmac('sha256', await options.secret())
      .update(`dpop-nonce.${period}`)
      .digest('base64url')
      .slice(0, MAC_LENGTH);
  }

  return {
    async current() {
      const period = Math.floor(now() / periodMs);
      if (issued?.period !== period) {
        issued = { period, nonce: `${period.toString(36)}.${await macOf(period)}` };
      }
      return issued.nonce;
    },
    async isValid(nonce) {
      const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{32})$/.exec(nonce);
      if (!match) return false;
      const period = parseInt(match[1]!, 36);
      const age = Math.floor(now() / periodMs) - period;
      if (age !== 0 && age !== 1) return false;
      return timingSafeEqual(Buffer.from(match[2]!), Buffer.from(await macOf(period)));
    },
  };
}
