import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { PAYMENT_DETAIL_TYPE } from '@portcullis/shop';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  browser,
  browserLogin,
  createClient,
  createUser,
  decodeJwt,
  discover,
  REDIRECT_URI,
  TEST_API_AUDIENCE,
  tokenRequest,
} from '@portcullis/testing';

// README "Payment authorization details (RFC 9396)": asked for at PAR and /authorize with
// openid-client, approved on the consent page, carried by the access token.

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const payment = (extra: Record<string, unknown> = {}) => ({
  type: PAYMENT_DETAIL_TYPE,
  amount: 1250,
  currency: 'EUR',
  orderId: randomUUID(),
  ...extra,
});

async function setup(extra: Record<string, unknown> = {}) {
  const user = await createUser(t, ['editor']);
  const client = await createClient(t, {
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'],
    first_party: true,
    ...extra,
  });
  const config = await discover(t, client.client_id, client.client_secret);
  return { user, client, config };
}

async function pkceParams(details: unknown, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  return {
    verifier,
    params: {
      redirect_uri: REDIRECT_URI,
      scope: 'openid offline_access payments:create',
      resource: TEST_API_AUDIENCE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
      authorization_details: JSON.stringify(details),
      ...extra,
    },
  };
}

test('discovery lists the payment type', async () => {
  const doc = (await (await fetch(`${t.issuer}/.well-known/openid-configuration`)).json()) as {
    authorization_details_types_supported?: string[];
  };
  expect(doc.authorization_details_types_supported).toEqual([PAYMENT_DETAIL_TYPE]);
});

describe('a payment asked for at PAR (openid-client)', () => {
  test('is shown on the consent page of a first-party client, then carried by the access token', async () => {
    const { user, config } = await setup();
    const detail = payment();
    const { verifier, params } = await pkceParams([detail]);
    const url = await oidc.buildAuthorizationUrlWithPAR(config, params);
    const pages: string[] = [];
    const callback = await browserLogin(url.href, user, { pages });
    const consent = pages.find((p) => p.includes('/confirm"'));
    expect(consent).toContain('One payment of at most <strong>€12.50</strong>');
    expect(consent).toContain(`for order <code>${detail.orderId}</code>`);

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: params.state,
    });
    const granted = tokens['authorization_details'] as Record<string, unknown>[];
    expect(granted).toEqual([{ ...detail, authorizationId: expect.any(String) }]);
    const claims = decodeJwt(tokens.access_token).payload as Record<string, unknown>;
    expect(claims['aud']).toBe(TEST_API_AUDIENCE);
    expect(claims['authorization_details']).toEqual(granted);

    // A refresh keeps the same details with the same ids: the payment is still allowed once.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, {
      resource: TEST_API_AUDIENCE,
    });
    expect(decodeJwt(refreshed.access_token).payload['authorization_details']).toEqual(granted);
  });

  test('an unknown type is refused with invalid_authorization_details', async () => {
    const { config } = await setup();
    const { params } = await pkceParams([{ type: 'payment_initiation', amount: 1 }]);
    const error = await oidc.buildAuthorizationUrlWithPAR(config, params).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'invalid_authorization_details' });
  });

  test.each([
    ['a negative amount', { amount: -5 }],
    ['a decimal amount', { amount: 12.5 }],
    ['a lower-case currency', { currency: 'eur' }],
    ['an order that is no uuid', { orderId: 'order-1' }],
    ['an unknown member', { creditorName: 'ACME Ltd' }],
    ['its own authorizationId', { authorizationId: 'mine' }],
    ['another location', { locations: ['https://elsewhere.example'] }],
  ])('a detail with %s is refused with invalid_authorization_details', async (_name, extra) => {
    const { config } = await setup();
    const { params } = await pkceParams([payment(extra)]);
    const error = await oidc.buildAuthorizationUrlWithPAR(config, params).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'invalid_authorization_details' });
  });

  test('a client registered with authorization_details_types [] may not ask', async () => {
    const { config } = await setup({ authorization_details_types: [] });
    const { params } = await pkceParams([payment()]);
    const error = await oidc.buildAuthorizationUrlWithPAR(config, params).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'invalid_authorization_details' });
  });

  test('more than five details are refused', async () => {
    const { config } = await setup();
    const { params } = await pkceParams([1, 2, 3, 4, 5, 6].map(() => payment()));
    const error = await oidc.buildAuthorizationUrlWithPAR(config, params).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'invalid_authorization_details' });
  });
});

describe('a payment asked for at /authorize', () => {
  test('the consent page says it in German with ui_locales=de, and Deny sends access_denied', async () => {
    const { user, config } = await setup();
    const detail = payment({ amount: 99_900, currency: 'JPY', locations: [TEST_API_AUDIENCE] });
    const { params } = await pkceParams([detail], { ui_locales: 'de' });
    const url = oidc.buildAuthorizationUrl(config, params);
    const pages: string[] = [];
    const callback = await browserLogin(url.href, user, { pages, consent: 'deny' });
    const consent = pages.find((p) => p.includes('/confirm"'));
    expect(consent).toContain('<html lang="de"');
    // JPY has no minor unit: 99900 is ¥99,900.
    expect(consent).toMatch(/Eine Zahlung von höchstens <strong>99\.900\s¥<\/strong>/);
    expect(callback.searchParams.get('error')).toBe('access_denied');
  });

  test('allowed, the token carries the details', async () => {
    const { user, config } = await setup();
    const detail = payment();
    const { verifier, params } = await pkceParams([detail]);
    const callback = await browserLogin(oidc.buildAuthorizationUrl(config, params).href, user);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: params.state,
    });
    expect(decodeJwt(tokens.access_token).payload['authorization_details']).toEqual([
      { ...detail, authorizationId: expect.any(String) },
    ]);
  });

  test('an invalid detail comes back to the redirect_uri as invalid_authorization_details', async () => {
    const { config } = await setup();
    const { params } = await pkceParams([payment({ amount: 0 })]);
    const res = await browser().get(oidc.buildAuthorizationUrl(config, params).href);
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_authorization_details');
  });

  test('a later sign-in without details gets a token without them', async () => {
    const { user, config } = await setup();
    const b = browser();
    const first = await pkceParams([payment()]);
    await browserLogin(oidc.buildAuthorizationUrl(config, first.params).href, user, { b });
    const { verifier, params } = await pkceParams([]);
    const { authorization_details: _d, ...plain } = params;
    const callback = await browserLogin(oidc.buildAuthorizationUrl(config, plain).href, user, {
      b,
    });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: plain.state,
    });
    expect(decodeJwt(tokens.access_token).payload['authorization_details']).toBeUndefined();
  });
});

describe('where no user approves them', () => {
  test('client credentials with details are refused with invalid_authorization_details', async () => {
    const service = await createClient(t, { grant_types: ['client_credentials'] });
    const basic = Buffer.from(`${service.client_id}:${service.client_secret}`).toString('base64');
    const res = await tokenRequest(
      t,
      {
        grant_type: 'client_credentials',
        scope: 'payments:create',
        authorization_details: JSON.stringify([payment()]),
      },
      { authorization: `Basic ${basic}` },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_authorization_details');
  });

  test('the device flow refuses details', async () => {
    const device = await createClient(t, {
      token_endpoint_auth_method: 'none',
      grant_types: ['device_code'],
    });
    const res = await fetch(`${t.issuer}/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: device.client_id,
        scope: 'openid payments:create',
        authorization_details: JSON.stringify([payment()]),
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_authorization_details');
  });
});
