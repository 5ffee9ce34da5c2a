/**
 * Payments authorized by their details (RFC 9396; README "Payment authorization details
 * (RFC 9396)") with the REAL auth server: openid-client asks for a payment detail at PAR or
 * /authorize, the user approves it on the consent page, and POST /payments accepts the token
 * for a matching payment once; anything else is 403 `insufficient_authorization_details`.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ACR } from '@portcullis/claims';
import { PAYMENT_DETAIL_TYPE } from '@portcullis/shop';
import * as oidc from 'openid-client';
import {
  browser,
  browserLogin,
  enrolTotp,
  REDIRECT_URI,
  submitSecondFactor,
  totpCode,
  until,
} from '@portcullis/testing';
import type { User } from '@portcullis/accounts';
import { FakePaymentProvider } from '../src/payments/fake-provider.js';
import type { ChargeRequest, ChargeResult, PaymentProvider } from '../src/payments/provider.js';
import { makeOrder, makeUser, PASSWORD } from './helpers/factories.js';
import { API_AUDIENCE, claimsOf, startTestApi, type AuthServerTestApi } from './helpers/harness.js';

/** The fake provider, optionally held at a gate (to keep a payment in flight). */
class GatedProvider implements PaymentProvider {
  readonly fake = new FakePaymentProvider();
  gate: Promise<void> | undefined;
  async charge(request: ChargeRequest): Promise<ChargeResult> {
    await this.gate;
    return this.fake.charge(request);
  }
}

const STEP_UP_AMOUNT = 10_000;
let api: AuthServerTestApi;
let provider: GatedProvider;
let config: oidc.Configuration;
let key = 0;
const newKey = () => `rar-${Date.now()}-${++key}`;

beforeAll(async () => {
  provider = new GatedProvider();
  api = await startTestApi({
    env: { STEP_UP: 'required', STEP_UP_PAYMENT_AMOUNT: String(STEP_UP_AMOUNT) },
    deps: { paymentProvider: provider },
  });
  const res = await fetch(`${api.auth.adminUrl}/admin/clients`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.auth.adminToken}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
      first_party: true,
    }),
  });
  const client = (await res.json()) as { client_id: string; client_secret: string };
  config = await oidc.discovery(
    new URL(api.auth.issuer),
    client.client_id,
    client.client_secret,
    oidc.ClientSecretBasic(client.client_secret),
    { execute: [oidc.allowInsecureRequests] },
  );
});
afterAll(() => api.close());

interface Detail {
  amount: number;
  currency: string;
  orderId: string;
}

/** Approves `details` on the consent page (PAR unless `plain`); returns the access token. */
async function tokenFor(
  user: User,
  details: Detail[],
  options: { plain?: boolean; mfaSecret?: string } = {},
): Promise<string> {
  const verifier = oidc.randomPKCECodeVerifier();
  const params: Record<string, string> = {
    redirect_uri: REDIRECT_URI,
    scope: 'openid payments:create payments:read',
    resource: API_AUDIENCE,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    authorization_details: JSON.stringify(
      details.map((d) => ({ type: PAYMENT_DETAIL_TYPE, ...d })),
    ),
    ...(options.mfaSecret ? { acr_values: ACR.mfa } : {}),
  };
  const url = options.plain
    ? oidc.buildAuthorizationUrl(config, params)
    : await oidc.buildAuthorizationUrlWithPAR(config, params);
  const b = browser();
  const pages: string[] = [];
  const signIn = { email: user.email, password: PASSWORD };
  let callback = await browserLogin(url.href, signIn, { b, pages });
  if (options.mfaSecret) {
    // The enrolment used this period's code: the next period's is accepted once.
    callback = await submitSecondFactor({ issuer: api.auth.issuer }, b, callback, 'totp', {
      code: totpCode(options.mfaSecret, Date.now() + 30_000),
    });
  } else {
    expect(pages.some((p) => p.includes('One payment of at most'))).toBe(true);
  }
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
  });
  return tokens.access_token;
}

const pay = (token: string, body: Detail, idempotencyKey = newKey()) =>
  api.request('POST', '/payments', { token, body, headers: { 'idempotency-key': idempotencyKey } });

async function editorWithOrder() {
  const user = await makeUser(api.database.db, ['editor']);
  const order = await makeOrder(api.database.db, user.id, { amount: 5000, currency: 'EUR' });
  return { user, orderId: order.id };
}

function expectRefusal(reply: Awaited<ReturnType<typeof pay>>, message: RegExp) {
  expect(reply.status).toBe(403);
  expect(reply.body).toEqual({
    error: 'insufficient_authorization_details',
    message: expect.stringMatching(message),
  });
  expect(reply.headers.get('www-authenticate')).toMatch(
    /^Bearer realm="portcullis", error="insufficient_authorization_details", error_description="[^"]+"/,
  );
}

describe('a token carrying a payment detail', () => {
  test('pays the matching payment once; the same key replays it, another key is refused', async () => {
    const { user, orderId } = await editorWithOrder();
    const detail = { amount: 1250, currency: 'EUR', orderId };
    const token = await tokenFor(user, [detail]);
    expect(claimsOf(token)['authorization_details']).toEqual([
      { type: PAYMENT_DETAIL_TYPE, ...detail, authorizationId: expect.any(String) },
    ]);
    const idempotencyKey = newKey();
    const paid = await pay(token, detail, idempotencyKey);
    expect(paid.status).toBe(201);
    expect(paid.body).toMatchObject({
      orderId,
      amount: 1250,
      currency: 'EUR',
      status: 'succeeded',
    });
    const replay = await pay(token, detail, idempotencyKey);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectRefusal(await pay(token, detail), /made already/);
  });

  test('refuses a higher amount, another currency and another order; a lower amount passes', async () => {
    const { user, orderId } = await editorWithOrder();
    const other = await makeOrder(api.database.db, user.id, { amount: 5000, currency: 'EUR' });
    const token = await tokenFor(user, [{ amount: 1000, currency: 'EUR', orderId }], {
      plain: true,
    });
    expectRefusal(await pay(token, { amount: 1001, currency: 'EUR', orderId }), /matches/);
    expectRefusal(await pay(token, { amount: 1000, currency: 'USD', orderId }), /matches/);
    expectRefusal(
      await pay(token, { amount: 1000, currency: 'EUR', orderId: other.id }),
      /matches/,
    );
    const lower = await pay(token, { amount: 800, currency: 'EUR', orderId });
    expect(lower.status).toBe(201);
    expectRefusal(await pay(token, { amount: 100, currency: 'EUR', orderId }), /made already/);
  });

  test('two details pay two payments, each once', async () => {
    const { user, orderId } = await editorWithOrder();
    const detail = { amount: 500, currency: 'EUR', orderId };
    const token = await tokenFor(user, [detail, detail]);
    expect((await pay(token, detail)).status).toBe(201);
    expect((await pay(token, detail)).status).toBe(201);
    expectRefusal(await pay(token, detail), /made already/);
  });

  test('of two racing payments one is made, the other refused while the first is in flight', async () => {
    const { user, orderId } = await editorWithOrder();
    const detail = { amount: 700, currency: 'EUR', orderId };
    const token = await tokenFor(user, [detail]);
    let open!: () => void;
    provider.gate = new Promise<void>((resolve) => (open = resolve));
    try {
      const first = pay(token, detail);
      // The first one holds the detail (used before the charge) and waits at the provider.
      const held = await until(
        () => api.database.db('payment_authorizations').where({ order_id: orderId }),
        (rows) => rows.length === 1,
        10_000,
      );
      expect(held).toHaveLength(1);
      const second = await pay(token, detail);
      expectRefusal(second, /made already/);
      open();
      expect((await first).status).toBe(201);
    } finally {
      open();
      provider.gate = undefined;
    }
    const rows = await api.database.db('payment_authorizations').where({ order_id: orderId });
    expect(rows).toHaveLength(1);
  });

  test('a payment above STEP_UP_PAYMENT_AMOUNT still needs the second factor', async () => {
    const { user, orderId } = await editorWithOrder();
    const detail = { amount: STEP_UP_AMOUNT + 1, currency: 'EUR', orderId };
    const password = await tokenFor(user, [detail]);
    const refused = await pay(password, detail);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: 'insufficient_user_authentication' });

    const { secret } = await enrolTotp({ issuer: api.auth.issuer }, browser(), {
      email: user.email,
      password: PASSWORD,
    });
    const withFactor = await tokenFor(user, [detail], { mfaSecret: secret });
    expect(claimsOf(withFactor)).toMatchObject({ acr: ACR.mfa });
    expect((await pay(withFactor, detail)).status).toBe(201);
  });
});

test('a token without details pays as its permissions allow', async () => {
  const { user, orderId } = await editorWithOrder();
  const token = await api.tokenFor({ ...user, password: PASSWORD }, { scope: 'payments:create' });
  expect(claimsOf(token)['authorization_details']).toBeUndefined();
  expect((await pay(token, { amount: 3000, currency: 'USD', orderId })).status).toBe(201);
  expect((await pay(token, { amount: 3000, currency: 'USD', orderId })).status).toBe(201);
});
