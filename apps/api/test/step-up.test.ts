/**
 * Step-up at the API (RFC 9470; README "Step-up"): DELETE /users/:id, POST /api-keys and
 * payments above STEP_UP_PAYMENT_AMOUNT want a second-factor sign-in of at most
 * STEP_UP_MAX_AGE seconds. The test issuer mints tokens with and without `acr` and
 * `auth_time`; each answer is asserted as a client sees it (status, WWW-Authenticate, body).
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair } from 'jose';
import { ACR, DPOP_ALGORITHMS } from '@portcullis/claims';
import { TEST_API_AUDIENCE } from '@portcullis/testing';
import { login, withSession } from './helpers/credentials.js';
import { makeOrder, makeUser } from './helpers/factories.js';
import { startTestApi, type IssuerTestApi } from './helpers/harness.js';

const MAX_AGE = 300;
const THRESHOLD = 10_000;
/** RFC 9728: every challenge names the API's metadata. */
const METADATA = `resource_metadata="${TEST_API_AUDIENCE}/.well-known/oauth-protected-resource"`;
const DPOP = `DPoP realm="portcullis", algs="${DPOP_ALGORITHMS.join(' ')}", ${METADATA}`;
const nowSec = () => Math.floor(Date.now() / 1000);

/** The RFC 9470 §3 challenge of a Bearer request, both schemes offered as on every 401. */
const challenge = (description: string) =>
  `Bearer realm="portcullis", error="insufficient_user_authentication", ` +
  `error_description="${description}", acr_values="${ACR.mfa}", max_age=${MAX_AGE}, ${METADATA}, ${DPOP}`;
const SECOND_FACTOR = 'this operation requires a sign-in with a second factor';
const RECENT = 'this operation requires a more recent sign-in';

const refusal = (description: string) => ({
  error: 'insufficient_user_authentication',
  message: description,
  acr_values: ACR.mfa,
  max_age: MAX_AGE,
});

let api: IssuerTestApi;

beforeAll(async () => {
  api = await startTestApi({
    issuer: 'test',
    env: { STEP_UP_MAX_AGE: String(MAX_AGE), STEP_UP_PAYMENT_AMOUNT: String(THRESHOLD) },
  });
});
afterAll(() => api.close());

/** A token of user `sub` with `roles`, signed in `age` seconds ago with `acr` (none: no claims). */
function signedIn(
  sub: string,
  roles: string[],
  sign: { acr?: string; age?: number; amr?: string[] } = {},
): Promise<string> {
  const claims: Record<string, unknown> = {};
  if (sign.acr !== undefined) claims['acr'] = sign.acr;
  if (sign.age !== undefined) claims['auth_time'] = nowSec() - sign.age;
  if (sign.amr !== undefined) claims['amr'] = sign.amr;
  return api.token(sub, roles, { claims });
}

const mfa = { acr: ACR.mfa, amr: ['pwd', 'otp'], age: 10 };

describe('DELETE /users/:id asks for a recent second-factor sign-in', () => {
  test('a token without acr, or with a password-only acr, gets the exact RFC 9470 challenge', async () => {
    const target = await makeUser(api.database.db);
    for (const sign of [{}, { acr: ACR.password, amr: ['pwd'], age: 10 }]) {
      const reply = await api.request('DELETE', `/users/${target.id}`, {
        token: await signedIn('admin-1', ['admin'], sign),
      });
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toBe(challenge(SECOND_FACTOR));
      expect(reply.body).toEqual(refusal(SECOND_FACTOR));
    }
    // Nothing was deleted.
    const admin = await signedIn('admin-1', ['admin'], mfa);
    expect((await api.request('GET', `/users/${target.id}`, { token: admin })).status).toBe(200);
  });

  test('a second-factor sign-in within max_age is accepted', async () => {
    const target = await makeUser(api.database.db);
    const token = await signedIn('admin-1', ['admin'], { ...mfa, age: MAX_AGE - 5 });
    expect((await api.request('DELETE', `/users/${target.id}`, { token })).status).toBe(204);
  });

  test('a second-factor sign-in older than max_age, or of unknown time, is refused', async () => {
    const target = await makeUser(api.database.db);
    for (const sign of [{ ...mfa, age: MAX_AGE + 5 }, { acr: ACR.mfa }]) {
      const reply = await api.request('DELETE', `/users/${target.id}`, {
        token: await signedIn('admin-1', ['admin'], sign),
      });
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toBe(challenge(RECENT));
      expect(reply.body).toEqual(refusal(RECENT));
    }
  });

  test('the permission is checked first: lacking it is 403 whatever the sign-in', async () => {
    for (const sign of [{}, mfa]) {
      const reply = await api.request('DELETE', `/users/${randomUUID()}`, {
        token: await signedIn('viewer-1', ['viewer'], sign),
      });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({ error: 'forbidden' });
    }
  });

  test('a client-credentials token is no user sign-in: 403 even with acr claims', async () => {
    const token = await api.issuer.tokenFor({
      sub: 'client:test-client',
      clientId: 'test-client',
      roles: ['admin'],
      claims: { acr: ACR.mfa, auth_time: nowSec() },
    });
    const reply = await api.request('DELETE', `/users/${randomUUID()}`, { token });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({ error: 'forbidden' });
  });

  test('a session from POST /login is a password sign-in: the challenge, not the deletion', async () => {
    const admin = await makeUser(api.database.db, ['admin']);
    const target = await makeUser(api.database.db);
    const sid = (await login(api, admin.email)).headers
      .getSetCookie()
      .find((c) => c.startsWith('sid='))!
      .slice(4)
      .split(';')[0]!;
    const reply = await api.request('DELETE', `/users/${target.id}`, {
      headers: withSession(sid),
    });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(challenge(SECOND_FACTOR));
    expect(reply.body).toEqual(refusal(SECOND_FACTOR));
  });

  test('a DPoP-bound token is challenged in the DPoP scheme', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const token = await api.token('admin-1', ['admin'], {
      claims: { cnf: { jkt: await calculateJwkThumbprint(jwk) } },
    });
    const target = randomUUID();
    const proof = await new CompactSign(
      new TextEncoder().encode(
        JSON.stringify({
          htm: 'DELETE',
          htu: `${api.url}/users/${target}`,
          iat: nowSec(),
          jti: randomUUID(),
          ath: createHash('sha256').update(token).digest('base64url'),
        }),
      ),
    )
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk })
      .sign(privateKey);
    const reply = await api.request('DELETE', `/users/${target}`, {
      headers: { authorization: `DPoP ${token}`, dpop: proof },
    });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(
      `DPoP realm="portcullis", error="insufficient_user_authentication", ` +
        `error_description="${SECOND_FACTOR}", acr_values="${ACR.mfa}", max_age=${MAX_AGE}, ` +
        `algs="${DPOP_ALGORITHMS.join(' ')}", ${METADATA}, Bearer realm="portcullis", ${METADATA}`,
    );
    expect(reply.body).toEqual(refusal(SECOND_FACTOR));
  });
});

describe('POST /api-keys asks for it too', () => {
  test('refused before the body is read, created after a step-up; the key itself cannot step up', async () => {
    const owner = await makeUser(api.database.db, ['admin']);
    const password = await signedIn(owner.id, ['admin']);
    const invalid = await api.request('POST', '/api-keys', { token: password, body: {} });
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get('www-authenticate')).toBe(challenge(SECOND_FACTOR));

    const body = { name: 'ops', permissions: ['users:delete', 'api-keys:create'] };
    const stepped = await signedIn(owner.id, ['admin'], mfa);
    const created = await api.request('POST', '/api-keys', { token: stepped, body });
    expect(created.status).toBe(201);

    // An API key carries no sign-in: a step-up route refuses it with 403.
    const key = (created.body as { key: string }).key;
    const target = await makeUser(api.database.db);
    for (const [method, path, sent] of [
      ['DELETE', `/users/${target.id}`, undefined],
      ['POST', '/api-keys', body],
    ] as const) {
      const reply = await api.request(method, path, { token: key, body: sent });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({ error: 'forbidden' });
    }
  });
});

describe('POST /payments above STEP_UP_PAYMENT_AMOUNT', () => {
  async function pay(token: string, orderId: string, amount: number) {
    return api.request('POST', '/payments', {
      token,
      headers: { 'idempotency-key': randomUUID() },
      body: { orderId, amount, currency: 'EUR' },
    });
  }

  test('up to the amount a password sign-in pays; above it the challenge, then a step-up pays', async () => {
    const payer = await makeUser(api.database.db, ['editor']);
    const order = await makeOrder(api.database.db, payer.id, { amount: 50_000 });
    const password = await signedIn(payer.id, ['editor'], { acr: ACR.password, age: 10 });

    expect((await pay(password, order.id, THRESHOLD)).status).toBe(201);
    const above = await pay(password, order.id, THRESHOLD + 1);
    expect(above.status).toBe(401);
    expect(above.headers.get('www-authenticate')).toBe(challenge(SECOND_FACTOR));
    expect(above.body).toEqual(refusal(SECOND_FACTOR));

    const stepped = await signedIn(payer.id, ['editor'], mfa);
    expect((await pay(stepped, order.id, THRESHOLD + 1)).status).toBe(201);
  });

  test('the rule reads the validated body: an invalid one is 422 whatever the sign-in', async () => {
    const password = await signedIn('payer', ['editor']);
    const reply = await api.request('POST', '/payments', {
      token: password,
      headers: { 'idempotency-key': randomUUID() },
      body: { orderId: 'not-a-uuid', amount: THRESHOLD * 10, currency: 'EUR' },
    });
    expect(reply.status).toBe(422);
  });
});

describe('the OpenAPI document shows each rule', () => {
  test('x-portcullis-step-up on the three operations, with the payment condition', async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed JSON document
    const { body } = (await api.request('GET', '/openapi.json')) as { body: any };
    const rule = { acr_values: ACR.mfa, max_age: MAX_AGE };
    expect(body.paths['/users/{id}'].delete['x-portcullis-step-up']).toEqual(rule);
    expect(body.paths['/api-keys'].post['x-portcullis-step-up']).toEqual(rule);
    expect(body.paths['/payments'].post['x-portcullis-step-up']).toEqual({
      ...rule,
      when: `amount above ${THRESHOLD} (STEP_UP_PAYMENT_AMOUNT)`,
    });
    const stepped = Object.values(body.paths as Record<string, Record<string, object>>)
      .flatMap((item) => Object.values(item))
      .filter((op) => 'x-portcullis-step-up' in op);
    expect(stepped).toHaveLength(3);
  });
});

describe('STEP_UP=off', () => {
  test('skips the rules (development only)', async () => {
    const off = await startTestApi({ issuer: 'test', env: { STEP_UP: 'off' } });
    try {
      const target = await makeUser(off.database.db);
      const token = await off.token('admin-1', ['admin']);
      expect((await off.request('DELETE', `/users/${target.id}`, { token })).status).toBe(204);
    } finally {
      await off.close();
    }
  });
});
