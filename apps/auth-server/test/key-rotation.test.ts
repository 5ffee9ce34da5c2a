import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createLocalJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { pino } from 'pino';
import { parseAuthConfig, startAuthServer, type RunningAuthServer } from '../src/index.js';
import { createClient, decodeJwt, discover } from './helpers/factories.js';
import { API_AUDIENCE, startTestAuthServer, type TestAuthServer } from './helpers/server.js';

// Publish before sign with a short lead: a second instance on the same database must
// publish the new key before it signs, and switch on its own clock.
const LEAD_SECONDS = 2;
const env = {
  SIGNING_KEY_PUBLISH_LEAD: String(LEAD_SECONDS),
  KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
};

let t: TestAuthServer;
let other: RunningAuthServer;
let otherDir: string;
beforeAll(async () => {
  t = await startTestAuthServer(env);
  otherDir = await mkdtemp(path.join(tmpdir(), 'portcullis-auth-b-'));
  const config = parseAuthConfig({
    NODE_ENV: 'test',
    AUTH_PORT: '0',
    ADMIN_PORT: '0',
    DATA_DIR: otherDir,
    API_AUDIENCE,
    SEED_DEMO: 'false',
    ...env,
  });
  other = await startAuthServer(config, {
    db: t.database.db,
    logger: pino({ level: 'silent' }),
    print: () => {},
  });
});
afterAll(async () => {
  await other?.close();
  await t?.close();
  if (otherDir) await rm(otherDir, { recursive: true, force: true });
});

type Jwks = { keys: Record<string, unknown>[] };
const jwksOf = async (base: string) =>
  (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as Jwks;
const kids = (jwks: Jwks) => jwks.keys.map((k) => k['kid']);

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('signing-key rotation: publish before sign', () => {
  test('the new key is published first, signs after the lead; old tokens keep verifying', async () => {
    const client = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const config = await discover(t, client.client_id, client.client_secret);
    const otherConfig = await oidc.discovery(
      new URL(other.issuer),
      client.client_id,
      client.client_secret,
      oidc.ClientSecretBasic(client.client_secret!),
      { execute: [oidc.allowInsecureRequests] },
    );
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
