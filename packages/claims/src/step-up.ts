import type { Principal } from './principal.js';

/** OIDC `acr` values of Portcullis sign-ins, weakest first, shared by auth server and API. */
export const ACR = {
  /** A password alone (also every session from the API's POST /login). */
  password: 'urn:portcullis:acr:pwd',
  /** A password and a second factor. */
  mfa: 'urn:portcullis:acr:mfa',
} as const;

export type Acr = (typeof ACR)[keyof typeof ACR];

const ACR_RANK: ReadonlyMap<string, number> = new Map([
  [ACR.password, 1],
  [ACR.mfa, 2],
]);

/** A stronger known class satisfies a weaker one; an unknown class satisfies only itself. */
export function acrSatisfies(actual: string | undefined, required: string): boolean {
  if (actual === undefined) return false;
  if (actual === required) return true;
  const have = ACR_RANK.get(actual);
  const need = ACR_RANK.get(required);
  return have !== undefined && need !== undefined && have >= need;
}

/** What a route requires of the caller's sign-in (RFC 9470 §3). */
export interface StepUpRequirement {
  /** The weakest acceptable `acr`, e.g. ACR.mfa. */
  acr: string;
  /** Largest accepted age of the sign-in (now - auth_time), seconds; omitted: any age. */
  maxAgeSec?: number;
}

/** `no_user_sign_in` is 403 (nothing to step up); the others are RFC 9470's 401. */
export type StepUpShortfall = 'no_user_sign_in' | 'acr_too_weak' | 'sign_in_too_old';

export function stepUpShortfall(
  principal: Principal,
  requirement: StepUpRequirement,
  nowMs: number = Date.now(),
): StepUpShortfall | undefined {
  if (principal.kind !== 'user') return 'no_user_sign_in';
  if (!acrSatisfies(principal.acr, requirement.acr)) return 'acr_too_weak';
  if (requirement.maxAgeSec !== undefined) {
    if (principal.authTime === undefined) return 'sign_in_too_old';
    if (nowMs / 1000 - principal.authTime > requirement.maxAgeSec) return 'sign_in_too_old';
  }
  return undefined;
}
