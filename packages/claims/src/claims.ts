import { isAuthorizationDetail, type AuthorizationDetail } from './authorization-details.js';

/** Claims read from access tokens (RFC 9068 §2.2, §2.2.1 plus `roles`, `email`, `grant_id`). */
export interface AccessTokenClaims {
  iss: string;
  /** RFC 7519 allows a string or an array; verification checks it contains the API audience. */
  aud: string | string[];
  /** A user id, or `client:<client_id>` for client-credentials tokens. */
  sub: string;
  client_id: string;
  /** Space-delimited OAuth scope; '' when absent. */
  scope: string;
  roles: string[];
  iat: number;
  exp: number;
  nbf?: number;
  jti: string;
  email?: string;
  /** oidc-provider grant id: lets a whole grant be revoked at once. */
  grant_id?: string;
  /** When the grant was created, Unix seconds with milliseconds (logout everywhere). */
  grant_iat?: number;
  /** RFC 7800/9449 §6: the DPoP key's thumbprint; a token with `cnf` is never accepted as Bearer. */
  cnf?: { jkt?: string };
  /** The sign-in's Authentication Context Class Reference (ACR in step-up.ts). */
  acr?: string;
  /** How the user signed in (RFC 8176 values: `pwd`, `otp`, `mfa`, …). */
  amr?: string[];
  /** When the user signed in, Unix seconds: the age a step-up `max_age` bounds. */
  auth_time?: number;
  /** RFC 8693 §4.1: the service acting for `sub`, and those before it (a delegation chain). */
  act?: Actor;
  /** RFC 9396 §9.1: what the user approved in detail, each described by its `type`. */
  authorization_details?: AuthorizationDetail[];
}

/** One actor of a delegation chain: `sub` acts now, `act` acted before it. */
export interface Actor {
  sub: string;
  act?: Actor;
}

/** Deepest accepted delegation chain (the auth server issues at most this many actors). */
export const MAX_ACTOR_DEPTH = 5;

/** Prefix of client-credentials subjects, so a client id can never equal a user id. */
export const CLIENT_SUBJECT_PREFIX = 'client:';

/** A shape check's answer: the claims, or the first claim that is missing or invalid. */
export type ClaimsParse =
  { success: true; data: AccessTokenClaims } | { success: false; path: string };

type Check = (value: unknown) => boolean;

const isText =
  (max = 1024): Check =>
  (v) =>
    typeof v === 'string' && v.length >= 1 && v.length <= max;
const isString =
  (max: number): Check =>
  (v) =>
    typeof v === 'string' && v.length <= max;
const isNumericDate: Check = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isArrayOf =
  (item: Check, min: number, max: number): Check =>
  (v) =>
    Array.isArray(v) && v.length >= min && v.length <= max && v.every(item);
const JKT = /^[A-Za-z0-9_-]{43}$/;
// Other confirmation methods (mTLS `x5t#S256`) stay, so a token bound otherwise is still refused as Bearer.
const isCnf: Check = (v) =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  ((v as { jkt?: unknown }).jkt === undefined ||
    (typeof (v as { jkt?: unknown }).jkt === 'string' && JKT.test((v as { jkt: string }).jkt)));

/** `{sub, act?}`, nested at most MAX_ACTOR_DEPTH deep; other members are dropped by copyActor. */
function isActor(v: unknown, depth = 1): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || depth > MAX_ACTOR_DEPTH)
    return false;
  const { sub, act } = v as { sub?: unknown; act?: unknown };
  return isText(255)(sub) && (act === undefined || isActor(act, depth + 1));
}

function copyActor(v: Actor): Actor {
  return { sub: v.sub, ...(v.act ? { act: copyActor(v.act) } : {}) };
}

const SHAPE: [keyof AccessTokenClaims, Check, 'required' | 'optional'][] = [
  ['iss', isText(), 'required'],
  ['aud', (v) => isText()(v) || isArrayOf(isText(), 1, 20)(v), 'required'],
  ['sub', isText(), 'required'],
  ['client_id', isText(), 'required'],
  ['scope', isString(2048), 'optional'],
  ['roles', isArrayOf(isString(100), 0, 50), 'optional'],
  ['iat', isNumericDate, 'required'],
  ['exp', isNumericDate, 'required'],
  ['nbf', isNumericDate, 'optional'],
  ['jti', isText(), 'required'],
  ['email', isString(320), 'optional'],
  ['grant_id', isText(), 'optional'],
  ['grant_iat', isNumericDate, 'optional'],
  ['cnf', isCnf, 'optional'],
  ['acr', isText(), 'optional'],
  [
    'amr',
    isArrayOf((v) => typeof v === 'string' && v.length >= 1 && v.length <= 64, 0, 20),
    'optional',
  ],
  ['auth_time', isNumericDate, 'optional'],
  ['act', (v) => isActor(v), 'optional'],
  ['authorization_details', isArrayOf(isAuthorizationDetail, 1, 20), 'optional'],
];

/** Shape check, keeping only the claims above; a bare `sub` equal to `client_id` is ambiguous: refused. */
export function parseAccessTokenClaims(payload: Record<string, unknown>): ClaimsParse {
  const data: Record<string, unknown> = { scope: '', roles: [] };
  for (const [name, check, presence] of SHAPE) {
    const value = payload[name];
    if (value === undefined && presence === 'optional') continue;
    if (!check(value)) return { success: false, path: name };
    data[name] =
      name === 'cnf'
        ? { ...(value as object) }
        : name === 'act'
          ? copyActor(value as Actor)
          : name === 'authorization_details'
            ? (value as AuthorizationDetail[]).map((d) => ({ ...d }))
            : value;
  }
  const claims = data as unknown as AccessTokenClaims;
  const ownClient = claims.sub.startsWith(CLIENT_SUBJECT_PREFIX)
    ? claims.sub === CLIENT_SUBJECT_PREFIX + claims.client_id
    : claims.sub !== claims.client_id;
  return ownClient ? { success: true, data: claims } : { success: false, path: 'sub' };
}
