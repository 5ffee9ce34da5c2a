import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { createClient, decodeJwt, discover, until } from '@portcullis/testing';
import { createLocalJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';

// Publish before sign with a short lead: a second instance on the same database must
// publish the new key before it signs, and switch on its own clock.
const LEAD_SECONDS = 2;

let t: TestAuthServer;
let other: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer({ SIGNING_KEY_PUBLISH_LEAD: String(LEAD_SECONDS) });
  other = await t.startInstance();
});
afterAll(async () => {
  await t?.close();
});

type Jwks = { keys: Record<string, unknown>[] };
const jwksOf = async (base: string) =>
  (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as Jwks;
const kids = (jwks: Jwks) => jwks.keys.map((k) => k['kid']);

describe('signing-key rotation: publish before sign', () => {
  test('the new key is published first, signs after the lead; old tokens keep verifying', async () => {
    const client = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const config = await discover(t, client.client_id, client.client_secret);
    const otherConfig = await discover(other, client.client_id, client.client_secret);
    const kidOf = async (c: oidc.Configuration) =>
      decodeJwt((await oidc.clientCredentialsGrant(c)).access_token).header.kid as string;

    const before = await oidc.clientCredentialsGrant(config);
    const oldKid = decodeJwt(before.access_token).header.kid as string;
    expect(await kidOf(otherConfig)).toBe(oldKid);

    const rotated = await t.admin('POST', '/admin/signing-keys', {});
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({ alg: 'RS256', status: 'next' });
    const newKid = rotated.body.kid as string;
    const activatesAt = Date.parse(rotated.body.activates_at);
    expect(activatesAt - Date.now()).toBeGreaterThan(LEAD_SECONDS * 1000 - 1000);

    // Published at once here, verify-only; tokens still carry the old kid.
    const published = await jwksOf(t.issuer);
    expect(kids(published)).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect(published.keys.find((k) => k['kid'] === newKid)?.['key_ops']).toEqual(['verify']);
    expect(await kidOf(config)).toBe(oldKid);
    const list = await t.admin('GET', '/admin/signing-keys');
    const byKid = Object.fromEntries(list.body.items.map((k: { kid: string }) => [k.kid, k]));
    expect(byKid[newKid]).toMatchObject({ status: 'next', signing: false });
    expect(byKid[oldKid]).toMatchObject({ status: 'active', signing: true });

    // The other instance learns the key on its reload (<= lead / 2), before it signs.
    const otherJwks = await until(
      () => jwksOf(other.issuer),
      (j) => kids(j).includes(newKid),
      LEAD_SECONDS * 1000,
    );
    expect(kids(otherJwks)).toContain(newKid);
    if (Date.now() < activatesAt - 200) expect(await kidOf(otherConfig)).toBe(oldKid);

    // After activation both instances sign with the new key.
    const waitFor = (c: oidc.Configuration) =>
      until(
        () => kidOf(c),
        (kid) => kid === newKid,
        LEAD_SECONDS * 1000 + 3000,
      );
    expect(await waitFor(config)).toBe(newKid);
    expect(await waitFor(otherConfig)).toBe(newKid);
    expect(Date.now()).toBeGreaterThanOrEqual(activatesAt);

    const after = await jwksOf(t.issuer);
    expect(after.keys.find((k) => k['kid'] === oldKid)?.['key_ops']).toEqual(['verify']);
    const opts = { issuer: t.issuer, audience: t.apiAudience, typ: 'at+jwt' };
    await expect(
      jwtVerify(before.access_token, createLocalJWKSet(after as never), opts),
    ).resolves.toBeDefined();
    const relisted = await t.admin('GET', '/admin/signing-keys');
    const old = relisted.body.items.find((k: { kid: string }) => k.kid === oldKid);
    expect(old).toMatchObject({ status: 'retired', signing: false });
    expect(Date.parse(old.published_until)).toBeGreaterThan(Date.now() + 15 * 60_000);
  });

  test('rotating twice within the lead: the pending key is superseded, never skipped back', async () => {
    const first = await t.admin('POST', '/admin/signing-keys', {});
    const second = await t.admin('POST', '/admin/signing-keys', { activate: 'now' });
    expect(second.body).toMatchObject({ status: 'active' });
    const list = await t.admin('GET', '/admin/signing-keys');
    const byKid = Object.fromEntries(list.body.items.map((k: { kid: string }) => [k.kid, k]));
    // The emergency key signs; the pending one retired before it ever signed.
    expect(byKid[second.body.kid]).toMatchObject({ status: 'active', signing: true });
    expect(byKid[first.body.kid]).toMatchObject({ status: 'retired', signing: false });
    expect(kids(await jwksOf(t.issuer))).toEqual(
      expect.arrayContaining([first.body.kid, second.body.kid]),
    );
  });
});
