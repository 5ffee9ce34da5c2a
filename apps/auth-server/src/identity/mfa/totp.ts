import { createHash } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import type { MfaRepo, TotpRecord } from '../../data/mfa-repo.js';
import { open, seal } from '../../kernel/sealed.js';

/** Authenticator apps (RFC 6238), each code used once (docs/security.md "Second factors"). */
const PERIOD = 30;
const WINDOW = 1;
const ISSUER = 'Portcullis';

export interface TotpEnrolment {
  /** Base32, for typing into the app by hand. */
  secret: string;
  /** The otpauth:// URI the QR code holds. */
  uri: string;
}

/** What an enrolment in progress belongs to (a sign-in or an account-page session). */
export const enrolmentOwner = {
  signIn: (interactionUid: string) => `interaction:${interactionUid}`,
  accountPage: (sessionUid: string) => `account:${sessionUid}`,
};

export interface TotpService {
  /** A new sealed secret, stored as `owner`'s enrolment in progress (replacing any other). */
  start(userId: string, label: string, owner: string): Promise<TotpEnrolment | undefined>;
  /** `owner`'s enrolment in progress (to show again), or undefined. */
  pending(userId: string, label: string, owner: string): Promise<TotpEnrolment | undefined>;
  /** A valid code for `owner`'s enrolment in progress confirms it. */
  confirm(userId: string, code: string, owner: string): Promise<boolean>;
  /** A valid, never used code of the user's confirmed app. */
  verify(userId: string, code: string): Promise<boolean>;
  remove(userId: string): Promise<boolean>;
}

const context = (userId: string) => `totp:${userId}`;
// Stored as a digest: the owner names a live interaction or session.
const ownerDigest = (owner: string) => createHash('sha256').update(owner).digest('base64url');
const normalize = (code: string) => code.replace(/\s+/g, '');

function enrolment(secret: Secret, label: string): TotpEnrolment {
  const uri = new TOTP({ issuer: ISSUER, label, secret, period: PERIOD }).toString();
  return { secret: secret.base32, uri };
}

/** The QR code of an otpauth URI as SVG (served by us: the CSP allows images from 'self'). */
export function qrSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}

const isPendingOf = (record: TotpRecord, digest: string) =>
  record.confirmedAt === null && record.enrolmentOwner === digest;

/** `now`: the clock codes are checked against (tests move it by whole periods). */
export function createTotpService(
  repo: MfaRepo,
  kek: Buffer,
  now: () => number = Date.now,
): TotpService {
  /** The time step `code` belongs to, or undefined when it is not valid now. */
  async function stepOf(
    userId: string,
    code: string,
    pendingOwner?: string,
  ): Promise<number | undefined> {
    const token = normalize(code);
    if (!/^\d{6}$/.test(token)) return undefined;
    const record = await repo.findTotp(userId);
    if (!record) return undefined;
    if (pendingOwner === undefined ? !record.confirmedAt : !isPendingOf(record, pendingOwner))
      return undefined;
    const secret = Secret.fromBase32(open(kek, context(userId), record.secretEnc));
    const timestamp = now();
    const delta = TOTP.validate({ token, secret, period: PERIOD, timestamp, window: WINDOW });
    if (delta === null) return undefined;
    return TOTP.counter({ period: PERIOD, timestamp }) + delta;
  }

  return {
    async start(userId, label, owner) {
      const secret = new Secret({ size: 20 });
      const sealed = seal(kek, context(userId), secret.base32);
      const stored = await repo.startTotp(userId, sealed, ownerDigest(owner));
      return stored ? enrolment(secret, label) : undefined;
    },
    async pending(userId, label, owner) {
      const record = await repo.findTotp(userId);
      if (!record || !isPendingOf(record, ownerDigest(owner))) return undefined;
      return enrolment(Secret.fromBase32(open(kek, context(userId), record.secretEnc)), label);
    },
    async confirm(userId, code, owner) {
      const digest = ownerDigest(owner);
      const step = await stepOf(userId, code, digest);
      return step !== undefined && repo.useTotpStep(userId, step, digest);
    },
    async verify(userId, code) {
      const step = await stepOf(userId, code);
      return step !== undefined && repo.useTotpStep(userId, step);
    },
    remove: (userId) => repo.deleteTotp(userId),
  };
}
