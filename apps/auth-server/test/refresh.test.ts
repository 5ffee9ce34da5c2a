import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { toJsonb } from '@portcullis/db';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  tokenRequest,
} from '@portcullis/testing';
import { MAX_SIBLINGS } from '../src/data/oidc-adapter.js';

// `t` tolerates no retry at all (REFRESH_REUSE_INTERVAL=0), so every second presentation
// is reuse; `lenient` runs the default reuse interval.
let t: TestAuthServer;
let lenient: TestAuthServer;
let webhook: Server;
const alerts: Record<string, unknown>[] = [];

beforeAll(async () => {
  webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      alerts.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const { port } = webhook.address() as AddressInfo;
  const ALERT_WEBHOOK_URL = `http://127.0.0.1:${port}/alerts`;
  t = await startTestAuthServer({ ALERT_WEBHOOK_URL, REFRESH_REUSE_INTERVAL: '0' });
  lenient = await startTestAuthServer({ ALERT_WEBHOOK_URL });
});
afterAll(async () => {
  await t?.close();
  await lenient?.close();
  await new Promise((r) => webhook.close(r));
});

const refreshAt = (server: TestAuthServer, clientId: string, refreshToken: string) =>
  tokenRequest(server, {
    grant_type: 'refresh_token',
    client_id: clientId,
    refresh_token: refreshToken,
  });
const refresh = (clientId: string, refreshToken: string) => refreshAt(t, clientId, refreshToken);

describe('refresh tokens', () => {
  test("each refresh carries the user's roles as stored at that moment", async () => {
    const user = await createUser(t, ['viewer']);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await pkceSignIn(config, user);
    expect(decodeJwt(first.access_token).payload.roles).toEqual(['viewer']);
    // Roles changed between two refreshes (as an operator would in the database): the
    // account is read once per request, never kept from an earlier one.
    await t.database
      .db('users')
      .where({ id: user.id })
      .update({ roles: toJsonb(['editor']) });
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    expect(decodeJwt(second.access_token).payload.roles).toEqual(['editor']);
  });

  // Without offline_access the refresh token lives with the sign-in session; with it, it
  // outlives the session (OIDC Core §11), and only a gone grant ends it.
  test.each([
    ['Grant', 'openid offline_access api', 400],
    ['Session', 'openid api', 400],
    ['Session', 'openid offline_access api', 200],
  ])(
    'once its %s is gone (read with the token in one query), scope %s: %s',
    async (model, scope, status) => {
      const user = await createUser(t);
      const client = await publicSpa(t);
      const config = await discover(t, client.client_id);
      const first = await pkceSignIn(config, user, { scope });
      const grantId = decodeJwt(first.access_token).payload.grant_id as string;
      // The other half is untouched: its refresh still works.
      const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
      // Gone as another instance or an operator would remove it: straight from the table.
      const rows = t.database.db('oidc_payloads').where({ type: model });
      if (model === 'Grant') await rows.andWhere({ id: grantId }).del();
      else await rows.andWhereRaw(`payload->>'accountId' = ?`, [user.id]).del();
      const res = await refresh(client.client_id, second.refresh_token!);
      expect(res.status).toBe(status);
      if (status === 400) expect(res.body.error).toBe('invalid_grant');
    },
  );

  test('rotated on every use; each response has new access and refresh tokens and expires_in', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await pkceSignIn(config, user);
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.expires_in).toBe(900);
    const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
    expect(third.refresh_token).not.toBe(second.refresh_token);
    expect(decodeJwt(third.access_token).payload.grant_id).toBe(
      decodeJwt(first.access_token).payload.grant_id,
    );
  });

  test('without a reuse interval, replaying a rotated refresh token revokes the grant and raises the alert', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await pkceSignIn(config, user);
    const grantId = decodeJwt(first.access_token).payload.grant_id;
    const second = await refresh(client.client_id, first.refresh_token!);
    expect(second.status).toBe(200);

    // Immediately replaying the old token (no grace window) is reuse.
    const replay = await refresh(client.client_id, first.refresh_token!);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    await t.server.settle();

    // The legitimate holder's newest refresh token is dead too.
    const newest = await refresh(client.client_id, second.body.refresh_token);
    expect(newest.body.error).toBe('invalid_grant');
    // No artifact of the grant is left, and the API deny list names the grant.
    expect(await t.database.db('oidc_payloads').where({ grant_id: grantId })).toHaveLength(0);
    expect(
      await t.database.db('revocations').where({ kind: 'grant', value: grantId }),
    ).not.toHaveLength(0);

    const audit = await t.admin('GET', '/admin/audit?kind=refresh_token_reuse');
    expect(audit.body.items[0]).toMatchObject({
      kind: 'refresh_token_reuse',
      clientId: client.client_id,
      subject: user.id,
      grantId,
    });
    const log = t.logs.find(
      (l) => l['event'] === 'refresh_token_reuse' && l['grant_id'] === grantId,
    );
    expect(log).toMatchObject({ level: 50, client_id: client.client_id, sub: user.id });
    expect(alerts).toContainEqual(
      expect.objectContaining({
        event: 'refresh_token_reuse',
        client_id: client.client_id,
        sub: user.id,
        grant_id: grantId,
      }),
    );
  });

  test('without a reuse interval, 10 parallel redemptions of one refresh token: exactly one succeeds', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await pkceSignIn(config, user);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => refresh(client.client_id, first.refresh_token!)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200))
      expect(r.body.error).toBe('invalid_grant');
    await t.server.settle();
    const audit = await t.admin('GET', '/admin/audit?kind=refresh_token_reuse');
    const grantId = decodeJwt(first.access_token).payload.grant_id;
    expect(audit.body.items.some((e: { grantId: string }) => e.grantId === grantId)).toBe(true);
  });

  test('revoking a refresh token at /token/revocation revokes its grant at the API too', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const tokens = await pkceSignIn(config, user);
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    await t.server.settle();
    const grantId = decodeJwt(tokens.access_token).payload.grant_id;
    expect(
      await t.database.db('revocations').where({ kind: 'grant', value: grantId }),
    ).not.toHaveLength(0);
    expect((await refresh(client.client_id, tokens.refresh_token!)).body.error).toBe(
      'invalid_grant',
    );
  });
});

/** Where the reuse path leaves its marks: audit rows and webhook alerts for the grant. */
async function reuseAlerts(server: TestAuthServer, grantId: unknown) {
  await server.server.settle();
  const audit = await server.admin('GET', '/admin/audit?kind=refresh_token_reuse');
  return {
    audit: audit.body.items.filter((e: { grantId: string }) => e.grantId === grantId).length,
    webhook: alerts.filter((a) => a['grant_id'] === grantId).length,
  };
}

/**
 * Sends a refresh and never reads the answer (a response lost to a crash or a dead mobile
 * network): the socket is dropped once the rotation is committed, which the database shows.
 */
async function refreshAndLoseResponse(clientId: string, refreshToken: string) {
  const url = new URL('/token', lenient.server.url);
  const req = request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  req.on('error', () => undefined);
  req.end(
    new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: refreshToken,
    }).toString(),
  );
  const rows = lenient.database.db('oidc_payloads').where({ type: 'RefreshToken' });
  for (let i = 0; i < 200; i++) {
    const successor = await rows.clone().where({ rotated_from: refreshToken }).first('id');
    if (successor) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  req.destroy();
}

describe('the reuse interval (REFRESH_REUSE_INTERVAL, default 5 s)', () => {
  async function session() {
    const user = await createUser(lenient);
    const client = await publicSpa(lenient);
    const config = await discover(lenient, client.client_id);
    const tokens = await pkceSignIn(config, user);
    const grantId = decodeJwt(tokens.access_token).payload.grant_id;
    const rt = (token: string) => refreshAt(lenient, client.client_id, token);
    return { client, grantId, first: tokens.refresh_token!, rt };
  }

  test('a rotation whose response was lost: the retry with the old token succeeds, the chain lives, no alert', async () => {
    const { client, grantId, first, rt } = await session();
    await refreshAndLoseResponse(client.client_id, first);
    const consumed = await lenient.database
      .db('oidc_payloads')
      .where({ type: 'RefreshToken', id: first })
      .first('consumed_at');
    expect(consumed?.consumed_at).toBeInstanceOf(Date);

    const retry = await rt(first);
    expect(retry.status).toBe(200);
    expect(retry.body.refresh_token).not.toBe(first);
    expect(decodeJwt(retry.body.access_token).payload.grant_id).toBe(grantId);
    const next = await rt(retry.body.refresh_token);
    expect(next.status).toBe(200);
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 0, webhook: 0 });
  });

  test('an honest retry gets a sibling; the first of the two used is the chain, the other is reuse', async () => {
    const { grantId, first, rt } = await session();
    const a = await rt(first);
    const b = await rt(first);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.refresh_token).not.toBe(a.body.refresh_token);
    // b's holder goes on; a's token is dead from then on, and presenting it is theft.
    const next = await rt(b.body.refresh_token);
    expect(next.status).toBe(200);
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 0, webhook: 0 });
    const stale = await rt(a.body.refresh_token);
    expect(stale.body).toMatchObject({ error: 'invalid_grant' });
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 1, webhook: 1 });
    expect((await rt(next.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('theft: the old token presented after its successor was used revokes the grant and alerts', async () => {
    const { grantId, first, rt } = await session();
    const second = await rt(first);
    const third = await rt(second.body.refresh_token);
    expect(third.status).toBe(200);
    // Well inside the interval, but the successor has been used.
    const replay = await rt(first);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 1, webhook: 1 });
    expect((await rt(third.body.refresh_token)).body.error).toBe('invalid_grant');
    expect(
      await lenient.database.db('revocations').where({ kind: 'grant', value: grantId }),
    ).not.toHaveLength(0);
  });

  test('a retry after the interval is reuse: grant revoked, alert raised', async () => {
    const { grantId, first, rt } = await session();
    const second = await rt(first);
    expect(second.status).toBe(200);
    // As if 6 s had passed since the rotation (the interval is judged by the database clock).
    await lenient.database
      .db('oidc_payloads')
      .where({ type: 'RefreshToken', id: first })
      .update({ consumed_at: lenient.database.db.raw(`now() - interval '6 seconds'`) });
    expect((await rt(first)).body.error).toBe('invalid_grant');
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 1, webhook: 1 });
    expect((await rt(second.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('10 concurrent refreshes with one token (two tabs): none revokes the grant; the chain goes on', async () => {
    const { grantId, first, rt } = await session();
    const results = await Promise.all(Array.from({ length: 10 }, () => rt(first)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200))
      expect(r.body.error).toBe('invalid_grant');
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 0, webhook: 0 });
    // Whichever answer the client kept, it refreshes.
    const kept = ok[ok.length - 1]!.body.refresh_token;
    expect((await rt(kept)).status).toBe(200);
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 0, webhook: 0 });
  });

  test(`40 concurrent refreshes with one token: at most ${MAX_SIBLINGS} succeed, the rest are invalid_grant without revoking or alerting`, async () => {
    const { grantId, first, rt } = await session();
    const results = await Promise.all(Array.from({ length: 40 }, () => rt(first)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThanOrEqual(MAX_SIBLINGS);
    for (const r of results.filter((x) => x.status !== 200))
      expect(r.body.error).toBe('invalid_grant');
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 0, webhook: 0 });
    expect((await rt(ok[0]!.body.refresh_token)).status).toBe(200);
  });

  test(`retries one after the other: ${MAX_SIBLINGS} siblings, then invalid_grant; the grant lives`, async () => {
    const { grantId, first, rt } = await session();
    const siblings = [];
    for (let i = 0; i < MAX_SIBLINGS; i++) siblings.push(await rt(first));
    expect(siblings.map((r) => r.status)).toEqual(siblings.map(() => 200));
    const refused = await rt(first);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    expect(await reuseAlerts(lenient, grantId)).toEqual({ audit: 0, webhook: 0 });
    expect((await rt(siblings.at(-1)!.body.refresh_token)).status).toBe(200);
  });
});
