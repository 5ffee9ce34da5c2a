import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { toJsonb } from '@portcullis/db';
import { startTestAuthServer, type TestAuthServer } from './helpers/server.js';
import {
  createUser,
  decodeJwt,
  discover,
  publicSpa,
  signIn,
  tokenRequest,
} from './helpers/factories.js';

let t: TestAuthServer;
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
  t = await startTestAuthServer({ ALERT_WEBHOOK_URL: `http://127.0.0.1:${port}/alerts` });
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => webhook.close(r));
});

const refresh = (clientId: string, refreshToken: string) =>
  tokenRequest(t, {
    grant_type: 'refresh_token',
    client_id: clientId,
    refresh_token: refreshToken,
  });

describe('refresh tokens', () => {
  test("each refresh carries the user's roles as stored at that moment", async () => {
    const user = await createUser(t, ['viewer']);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await signIn(t, config, user);
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

  test.each(['Grant', 'Session'])(
    'refused once its %s is gone (read with the token in one query)',
    async (model) => {
      const user = await createUser(t);
      const client = await publicSpa(t);
      const config = await discover(t, client.client_id);
      const first = await signIn(t, config, user);
      const grantId = decodeJwt(first.access_token).payload.grant_id as string;
      // The other half is untouched: its refresh still works.
      const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
      // Gone as another instance or an operator would remove it: straight from the table.
      const rows = t.database.db('oidc_payloads').where({ type: model });
      if (model === 'Grant') await rows.andWhere({ id: grantId }).del();
      else await rows.andWhereRaw(`payload->>'accountId' = ?`, [user.id]).del();
      const res = await refresh(client.client_id, second.refresh_token!);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    },
  );

  test('rotated on every use; each response has new access and refresh tokens and expires_in', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await signIn(t, config, user);
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

  test('reuse of a rotated refresh token revokes the grant and raises the alert (no grace window)', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await signIn(t, config, user);
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

  test('10 parallel redemptions of one refresh token: exactly one succeeds', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const first = await signIn(t, config, user);
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
    const tokens = await signIn(t, config, user);
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
