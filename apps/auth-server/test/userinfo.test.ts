import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from './helpers/server.js';
import { createUser, decodeJwt, discover, publicSpa, signIn } from './helpers/factories.js';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const me = (token: string) =>
  fetch(`${t.issuer}/me`, { headers: { authorization: `Bearer ${token}` } });

describe('userinfo (/me) next to API tokens', () => {
  test('one grant gives both: the API JWT, and a /me token from a refresh narrowed to OIDC scopes', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const tokens = await signIn(t, config, user, 'openid email offline_access api');
    expect(decodeJwt(tokens.access_token).payload.aud).toBe(t.apiAudience);
    // An API token is not a userinfo token (its audience is the API).
    expect((await me(tokens.access_token)).status).toBe(401);

    const userinfo = await oidc.refreshTokenGrant(config, tokens.refresh_token!, {
      scope: 'openid email',
    });
    expect(userinfo.access_token.split('.')).toHaveLength(1); // opaque
    const res = await me(userinfo.access_token);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ sub: user.id, email: user.email });

    // The rotated refresh token still carries the whole grant: API tokens again.
    const again = await oidc.refreshTokenGrant(config, userinfo.refresh_token!);
    expect(decodeJwt(again.access_token).payload).toMatchObject({
      aud: t.apiAudience,
      scope: expect.stringContaining('api'),
    });
  });
});
