import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  apiScopeOf,
  approveDevice,
  browser,
  type Browser,
  createClient,
  createUser,
  decodeJwt,
  discover,
  submitDeviceCode,
  tokenRequest,
} from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer({}, { deviceIntervalSeconds: 1 });
});
afterAll(async () => {
  await t?.close();
});

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
async function deviceClient() {
  const client = await createClient(t, {
    token_endpoint_auth_method: 'none',
    grant_types: ['device_code', 'refresh_token'],
    first_party: true,
  });
  return { client, config: await discover(t, client.client_id) };
}

const submitCode = (b: Browser, typed: string) => submitDeviceCode(t, b, typed);
const approve = (
  b: Browser,
  typed: string,
  user: { email: string; password: string },
  abort = false,
) => approveDevice(t, b, typed, user, abort);

describe('device authorization grant (RFC 8628)', () => {
  test('happy path: interval announced, lower-case spaced code accepted, tokens issued', async () => {
    const user = await createUser(t, ['viewer']);
    const { config } = await deviceClient();
    const auth = await oidc.initiateDeviceAuthorization(config, {
      scope: 'openid api offline_access',
    });
    expect(auth.interval).toBe(1);
    expect(auth.verification_uri).toBe(`${t.issuer}/device`);
    expect(auth.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const typed = ` ${auth.user_code.toLowerCase().replace('-', ' - ')} `;
    const done = await approve(browser(), typed, user);
    expect(done).toContain('Device connected');
    const tokens = await oidc.pollDeviceAuthorizationGrant(config, auth);
    expect(tokens.refresh_token).toBeTruthy();
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({
      sub: user.id,
      roles: ['viewer'],
      scope: await apiScopeOf(t, ['viewer']),
    });
  });

  test('slow_down: a poll earlier than the interval raises the interval by 5 s', async () => {
    const { client, config } = await deviceClient();
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'api' });
    const poll = () =>
      tokenRequest(t, {
        grant_type: DEVICE_GRANT,
        client_id: client.client_id,
        device_code: auth.device_code,
      });
    const first = await poll();
    expect(first.body.error).toBe('authorization_pending');
    const second = await poll();
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('slow_down');
    const third = await poll();
    expect(third.body.error).toBe('slow_down');
    const id = createHash('sha256').update(auth.device_code).digest('hex');
    const row = await t.database.db('device_polls').where({ id }).first();
    expect(row.interval_s).toBeGreaterThanOrEqual(6);
  });

  test('denied: aborting on the confirmation page gives access_denied', async () => {
    const user = await createUser(t);
    const { client, config } = await deviceClient();
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'api' });
    await approve(browser(), auth.user_code, user, true);
    const res = await tokenRequest(t, {
      grant_type: DEVICE_GRANT,
      client_id: client.client_id,
      device_code: auth.device_code,
    });
    expect(res.body.error).toBe('access_denied');
  });

  test('expired: an expired device code gives expired_token', async () => {
    const { client, config } = await deviceClient();
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'api' });
    await t.database.db.raw(
      `update oidc_payloads set payload = jsonb_set(payload, '{exp}', to_jsonb(1)), expires_at = now() - interval '1 second'
       where type = 'DeviceCode' and id = ?`,
      [auth.device_code],
    );
    const res = await tokenRequest(t, {
      grant_type: DEVICE_GRANT,
      client_id: client.client_id,
      device_code: auth.device_code,
    });
    expect(res.body.error).toBe('expired_token');
  });

  test('wrong user codes: the sixth attempt within 10 minutes is 429 with Retry-After', async () => {
    const b = browser();
    for (let i = 0; i < 5; i++) {
      const res = await submitCode(b, 'BBBB-BBBB');
      expect(res.status).not.toBe(429);
      expect(await res.text()).toContain('not valid');
    }
    const limited = await submitCode(b, 'CCCC-CCCC');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await limited.text()).toContain('Too many wrong codes. Try again later.');
  });
});
