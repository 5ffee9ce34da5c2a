import { Secret, TOTP } from 'otpauth';
import type { AuthServerHandle } from './server-handle.js';
import { browserLogin } from './sign-in.js';
import type { Browser } from './cookie-jar.js';
import { REDIRECT_URI } from './factories.js';

// The second factor driven as a user would (README "Multi-factor sign-in"), codes made with otpauth.
type Issuer = { issuer: string };
type WithDatabase = Pick<AuthServerHandle, 'database'>;
type User = { email: string; password: string };

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const interactionOf = (url: URL) => /\/interaction\/([^/?]+)/.exec(url.pathname)?.[1] ?? '';

/** The RFC 6238 code of `secret` (base32) at `at` (ms); the server accepts ±1 period. */
export function totpCode(secret: string, at = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
}

/** Posts the factor form of the interaction at `at` and follows on to `stopAt`; returns that URL. */
export async function submitSecondFactor(
  t: Issuer,
  b: Browser,
  at: URL,
  factor: 'totp' | 'recovery',
  form: Record<string, string>,
  stopAt: string = REDIRECT_URI,
): Promise<URL> {
  const page = await (await b.get(at.href)).text();
  const res = await b.postForm(`${t.issuer}/interaction/${interactionOf(at)}/${factor}`, {
    csrf: csrfOf(page),
    ...form,
  });
  if (res.status !== 303) throw new Error(`${factor} answered ${res.status}`);
  const next = new URL(res.headers.get('location')!, t.issuer).href;
  return browserLogin(next, { email: '', password: '' }, { b, stopAt });
}

export async function accountSignIn(
  t: Issuer,
  b: Browser,
  user: User,
  code?: () => string,
): Promise<string> {
  const stopAt = `${t.issuer}/account/callback`;
  let at = await browserLogin(`${t.issuer}/account/sign-in`, user, { b, stopAt });
  if (!at.href.startsWith(stopAt)) {
    if (!code) throw new Error(`the account sign-in stopped at ${at.href}`);
    at = await submitSecondFactor(t, b, at, 'totp', { code: code() }, stopAt);
  }
  const page = await b.get(`${t.issuer}/account`);
  if (page.status !== 200) throw new Error(`the account page answered ${page.status}`);
  return page.text();
}

/**
 * Enrols an authenticator app; `at`'s period's code is used up, the next must be later.
 * A function is read when the code is sent (a slow sign-in may cross a period).
 */
export async function enrolTotp(
  t: Issuer,
  b: Browser,
  user: User,
  at: number | (() => number | Promise<number>) = Date.now(),
) {
  const account = await accountSignIn(t, b, user);
  const start = await b.postForm(`${t.issuer}/account/totp/start`, { csrf: csrfOf(account) });
  if (start.status !== 303) throw new Error(`enrolment start answered ${start.status}`);
  const page = await (await b.get(`${t.issuer}/account/totp`)).text();
  const secret = /id="totp-secret">([^<]+)</.exec(page)?.[1]?.replaceAll(' ', '') ?? '';
  const confirm = await b.postForm(`${t.issuer}/account/totp/confirm`, {
    csrf: csrfOf(page),
    code: totpCode(secret, typeof at === 'function' ? await at() : at),
  });
  const shown = await confirm.text();
  if (confirm.status !== 200) throw new Error(`enrolment confirm answered ${confirm.status}`);
  const recoveryCodes = [...shown.matchAll(/class="recovery-code">([^<]+)</g)].map((m) => m[1]!);
  return { secret, recoveryCodes };
}

/** Moves the sessions' sign-in time `seconds` back, as oidc-provider stored it; returns how many. */
export async function ageSignIn(t: WithDatabase, userId: string, seconds: number) {
  const result = await t.database.db.raw(
    `update oidc_payloads
       set payload = jsonb_set(payload, '{loginTs}', to_jsonb((payload->>'loginTs')::bigint - ?))
     where type = 'Session' and payload->>'accountId' = ? returning id`,
    [seconds, userId],
  );
  return (result as { rows: unknown[] }).rows.length;
}
