import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { createUser, decodeJwt, discover, pkceSignIn, publicSpa } from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

describe('GET /admin/signing-keys says what each key signs', () => {
  test('after a rotation to ES256 the RS256 key is listed as still signing ID tokens', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const [rsa] = (await t.admin('GET', '/admin/signing-keys')).body.items;
    expect(rsa).toMatchObject({ alg: 'RS256', signing: true, signs: ['access_token', 'id_token'] });

    const ec = await t.admin('POST', '/admin/signing-keys', { alg: 'ES256', activate: 'now' });
    expect(ec.status).toBe(201);
    const list = await t.admin('GET', '/admin/signing-keys');
    const byKid = Object.fromEntries(list.body.items.map((k: { kid: string }) => [k.kid, k]));
    expect(byKid[ec.body.kid]).toMatchObject({
      alg: 'ES256',
      status: 'active',
      signing: true,
      signs: ['access_token', 'id_token'],
    });
    expect(byKid[rsa.kid]).toMatchObject({
      alg: 'RS256',
      status: 'active',
      signing: true,
      signs: ['id_token'],
    });

    // What the listing says is what the tokens show.
    const tokens = await pkceSignIn(config, user);
    expect(decodeJwt(tokens.access_token).header).toMatchObject({ alg: 'ES256', kid: ec.body.kid });
    expect(decodeJwt(tokens.id_token!).header).toMatchObject({ alg: 'RS256', kid: rsa.kid });

    // A replaced key of the same alg signs nothing.
    const rsa2 = await t.admin('POST', '/admin/signing-keys', { alg: 'RS256', activate: 'now' });
    const relisted = await t.admin('GET', '/admin/signing-keys');
    const now = Object.fromEntries(relisted.body.items.map((k: { kid: string }) => [k.kid, k]));
    expect(now[rsa.kid]).toMatchObject({ status: 'retired', signing: false, signs: [] });
    expect(now[rsa2.body.kid]).toMatchObject({ signs: ['access_token', 'id_token'] });
    // The ES256 key still signs FAPI 2.0 clients' access tokens (README "FAPI 2.0").
    expect(now[ec.body.kid]).toMatchObject({ signs: ['fapi_access_token', 'id_token'] });
  });
});
