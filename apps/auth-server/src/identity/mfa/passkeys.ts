import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { z } from 'zod';
import type { Passkey, PasskeysRepo } from '../../data/passkeys-repo.js';
import { AuthServerError } from '../../kernel/errors.js';

/** Passkeys (WebAuthn): enrolment and sign-in; the decisions: docs/security.md "Passkeys". */
export const CHALLENGE_TTL_SECONDS = 180;
/** Live challenges one sign-in or account page may hold (a double click needs two). */
const CHALLENGES_PER_BINDING = 5;
/** What the browser is told (WebAuthn `timeout`), inside the challenge's life. */
const CEREMONY_TIMEOUT_MS = 120_000;
export const PASSKEY_NAME_MAX = 64;
/** COSE algorithms: Ed25519, P-256, RSA (the library's default would probe for ML-DSA). */
const ALGORITHMS = [-8, -7, -257];
/** A user keeps at most this many passkeys. */
export const PASSKEYS_PER_USER = 10;

export type PasskeyErrorCode =
  | 'invalid_response'
  | 'challenge_unknown'
  | 'unknown_credential'
  | 'wrong_user'
  | 'verification_failed'
  | 'already_registered'
  | 'too_many';

const MESSAGES: Record<PasskeyErrorCode, string> = {
  invalid_response: 'The passkey response is not valid.',
  challenge_unknown: 'This passkey request has expired or was already used. Try again.',
  unknown_credential: 'This passkey is not registered here.',
  wrong_user: 'This passkey belongs to another account.',
  verification_failed: 'The passkey could not be verified.',
  already_registered: 'This passkey is already registered.',
  too_many: `An account keeps at most ${PASSKEYS_PER_USER} passkeys. Remove one first.`,
};

/** A refused passkey ceremony; its message is the page's (or the JSON answer's) text. */
export class PasskeyError extends AuthServerError {
  constructor(readonly code: PasskeyErrorCode) {
    super(MESSAGES[code], {
      status: 400,
      expose: true,
      uiText: { key: `mfa:passkey.errors.${code}`, values: { max: PASSKEYS_PER_USER } },
    });
  }
}

export interface PasskeyUser {
  id: string;
  email: string;
  name?: string | null | undefined;
}

export interface PasskeyConfig {
  /** The relying party id: the issuer's host, or WEBAUTHN_RP_ID (a suffix of it). */
  rpId: string;
  /** The origin our pages are served from: the issuer's. */
  origin: string;
  rpName: string;
}

export interface PasskeySignIn {
  passkey: Passkey;
  /** The authenticator verified the user (PIN, biometrics): required for a sign-in alone. */
  userVerified: boolean;
}

export interface PasskeyService {
  readonly config: PasskeyConfig;
  registrationOptions(
    user: PasskeyUser,
    binding: string,
  ): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** Verifies a registration response and stores the passkey under `name`. */
  register(user: PasskeyUser, binding: string, response: unknown, name: string): Promise<Passkey>;
  /** Sign-in options: `userId`'s passkeys only, or (none) any discoverable one with UV. */
  authenticationOptions(
    binding: string,
    userId?: string,
  ): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** Verifies an assertion against the challenge issued to `binding`; throws PasskeyError. */
  authenticate(binding: string, response: unknown): Promise<PasskeySignIn>;
}

const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'base64url');
const base = {
  id: b64url.max(1400),
  rawId: b64url.max(1400),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};
const registrationSchema = z.object({
  ...base,
  response: z.object({
    clientDataJSON: b64url.max(4096),
    attestationObject: b64url.max(32_768),
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
});
const authenticationSchema = z.object({
  ...base,
  response: z.object({
    clientDataJSON: b64url.max(4096),
    authenticatorData: b64url.max(4096),
    signature: b64url.max(2048),
    userHandle: b64url.max(128).optional(),
  }),
});
const clientDataSchema = z.object({ challenge: b64url.max(256) });

/** The challenge a response answers, read from its clientDataJSON (verified afterwards). */
function challengeOf(clientDataJSON: string): string {
  try {
    return clientDataSchema.parse(JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString()))
      .challenge;
  } catch {
    throw new PasskeyError('invalid_response');
  }
}

function parse<T>(schema: z.ZodType<T>, response: unknown): T {
  const result = schema.safeParse(typeof response === 'string' ? safeJson(response) : response);
  if (!result.success) throw new PasskeyError('invalid_response');
  return result.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The WebAuthn user handle: the user id's bytes (no personal data), base64url in JSON. */
const userHandleOf = (userId: string) => Buffer.from(userId).toString('base64url');

export function createPasskeyService(repo: PasskeysRepo, config: PasskeyConfig): PasskeyService {
  // Given as bytes: a string challenge would be taken as UTF-8 text and encoded again.
  const newChallenge = () => new Uint8Array(randomBytes(32));

  async function consume(
    clientDataJSON: string,
    purpose: 'register' | 'authenticate',
    binding: string,
  ) {
    const issued = await repo.consumeChallenge(challengeOf(clientDataJSON), purpose, binding);
    if (!issued) throw new PasskeyError('challenge_unknown');
    return issued;
  }

  return {
    config,

    async registrationOptions(user, binding) {
      const existing = await repo.listByUser(user.id);
      if (existing.length >= PASSKEYS_PER_USER) throw new PasskeyError('too_many');
      const options = await generateRegistrationOptions({
        rpName: config.rpName,
        rpID: config.rpId,
        userName: user.email,
        userDisplayName: user.name ?? user.email,
        userID: new Uint8Array(Buffer.from(user.id)),
        challenge: newChallenge(),
        timeout: CEREMONY_TIMEOUT_MS,
        attestationType: 'none',
        supportedAlgorithmIDs: ALGORITHMS,
        excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
        // Discoverable (sign-in with no email typed); UV required when the passkey signs in alone.
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      });
      await repo.issueChallenge(
        { challenge: options.challenge, purpose: 'register', binding, userId: user.id },
        CHALLENGE_TTL_SECONDS,
        CHALLENGES_PER_BINDING,
      );
      return options;
    },

    async register(user, binding, response, name) {
      const parsed = parse(registrationSchema, response) as RegistrationResponseJSON;
      const issued = await consume(parsed.response.clientDataJSON, 'register', binding);
      if (issued.userId !== user.id) throw new PasskeyError('challenge_unknown');
      let verified;
      try {
        verified = await verifyRegistrationResponse({
          response: parsed,
          expectedChallenge: issued.challenge,
          expectedOrigin: config.origin,
          expectedRPID: config.rpId,
          requireUserVerification: false,
          supportedAlgorithmIDs: ALGORITHMS,
        });
      } catch {
        throw new PasskeyError('verification_failed');
      }
      if (!verified.verified) throw new PasskeyError('verification_failed');
      const info = verified.registrationInfo;
      if ((await repo.listByUser(user.id)).length >= PASSKEYS_PER_USER) {
        throw new PasskeyError('too_many');
      }
      const passkey: Passkey = {
        id: info.credential.id,
        userId: user.id,
        name: name.trim().slice(0, PASSKEY_NAME_MAX) || 'Passkey',
        publicKey: Uint8Array.from(info.credential.publicKey),
        counter: info.credential.counter,
        transports: info.credential.transports ?? [],
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        createdAt: new Date(),
        lastUsedAt: null,
      };
      if (!(await repo.create(passkey))) throw new PasskeyError('already_registered');
      return passkey;
    },

    async authenticationOptions(binding, userId) {
      const allow = userId ? await repo.listByUser(userId) : [];
      const options = await generateAuthenticationOptions({
        rpID: config.rpId,
        challenge: newChallenge(),
        timeout: CEREMONY_TIMEOUT_MS,
        allowCredentials: allow.map((p) => ({ id: p.id, transports: p.transports })),
        userVerification: userId ? 'preferred' : 'required',
      });
      await repo.issueChallenge(
        { challenge: options.challenge, purpose: 'authenticate', binding, userId: userId ?? null },
        CHALLENGE_TTL_SECONDS,
        CHALLENGES_PER_BINDING,
      );
      return options;
    },

    async authenticate(binding, response) {
      const parsed = parse(authenticationSchema, response) as AuthenticationResponseJSON;
      const issued = await consume(parsed.response.clientDataJSON, 'authenticate', binding);
      const passkey = await repo.find(parsed.id);
      if (!passkey) throw new PasskeyError('unknown_credential');
      // A second factor must be the user's own passkey; a discoverable one must name its user.
      if (issued.userId !== null && passkey.userId !== issued.userId) {
        throw new PasskeyError('wrong_user');
      }
      const handle = parsed.response.userHandle;
      if (handle !== undefined && handle !== userHandleOf(passkey.userId)) {
        throw new PasskeyError('wrong_user');
      }
      let verified;
      try {
        verified = await verifyAuthenticationResponse({
          response: parsed,
          expectedChallenge: issued.challenge,
          expectedOrigin: config.origin,
          expectedRPID: config.rpId,
          credential: { id: passkey.id, publicKey: passkey.publicKey, counter: passkey.counter },
          requireUserVerification: issued.userId === null,
        });
      } catch {
        throw new PasskeyError('verification_failed');
      }
      if (!verified.verified) throw new PasskeyError('verification_failed');
      const info = verified.authenticationInfo;
      const recorded = await repo.recordUse(passkey.id, {
        counter: info.newCounter,
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
      });
      if (!recorded) throw new PasskeyError('verification_failed');
      return {
        passkey: {
          ...passkey,
          counter: info.newCounter,
          deviceType: info.credentialDeviceType,
          backedUp: info.credentialBackedUp,
        },
        userVerified: info.userVerified,
      };
    },
  };
}

/** The relying party of this auth server: WEBAUTHN_RP_ID or the issuer's host, its origin. */
export function passkeyConfigFor(issuer: string, rpId: string | undefined): PasskeyConfig {
  const url = new URL(issuer);
  return { rpId: rpId ?? url.hostname, origin: url.origin, rpName: 'Portcullis' };
}
