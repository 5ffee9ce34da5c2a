/**
 * RFC 8693 token exchange with this SDK (README "Token exchange (RFC 8693)"): a service holding
 * a user's API token exchanges it with `exchangeToken`, writes at the real API with the
 * exchanged token, and the API's events name the service as the actor (chains name every one).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseApiConfig, startApiServer, type RunningApiServer } from '@portcullis/api';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createClient,
  createUser,
  discover,
  freePort,
  pkceSignIn,
  publicSpa,
} from '@portcullis/testing';
import { pino } from 'pino';
import {
  createPortcullisClient,
  exchangeToken,
  OAuthError,
  portcullisEndpoints,
} from '../src/index.js';

let apiUrl: string;
let auth: TestAuthServer;
let api: RunningApiServer;
let dataDir: string;

beforeAll(async () => {
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-exchange-api-'));
  const logger = pino({ level: 'silent' });
  auth = await startTestAuthServer({ API_AUDIENCE: apiUrl }, { logger });
  api = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: String(port),
      ISSUER: auth.issuer,
      API_AUDIENCE: apiUrl,
      DATA_DIR: dataDir,
      STEP_UP: 'off',
    }),
    { db: auth.database.db, logger },
  );
}, 60_000);

afterAll(async () => {
  await api?.close();
  await auth?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A service that may exchange user tokens for the API, with its secret. */
async function service() {
  const c = await createClient(auth, {
    grant_types: ['client_credentials'],
    token_exchange: { audiences: [apiUrl] },
  });
  return { clientId: c.client_id, clientSecret: c.client_secret! };
}

const exchange = (
  svc: { clientId: string; clientSecret: string },
  subjectToken: string,
  scope?: string,
) =>
  exchangeToken({
    tokenUrl: portcullisEndpoints(auth.issuer).tokenEndpoint,
    ...svc,
    subjectToken,
    resource: apiUrl,
    ...(scope ? { scope } : {}),
  });

const order = { customer: 'exchange', amount: 1200, currency: 'EUR' };

describe('token exchange with the SDK, the API recording the actor', () => {
  it('writes with an exchanged token are the user’s, their events name the service', async () => {
    const user = await createUser(auth);
    const spa = await publicSpa(auth);
    const tokens = await pkceSignIn(await discover(auth, spa.client_id), user, {
      scope: 'openid api',
    });
    const svc = await service();
    const exchanged = await exchange(svc, tokens.access_token);
    expect(exchanged.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');

    const asService = createPortcullisClient({
      baseUrl: apiUrl,
      accessToken: exchanged.access_token,
    });
    const viaService = await asService.orders.create(order);
    const asUser = createPortcullisClient({ baseUrl: apiUrl, accessToken: tokens.access_token });
    const own = await asUser.orders.create(order);

    // The second service in a chain exchanges the first one's token: both are recorded.
    const next = await service();
    const chained = await exchange(next, exchanged.access_token);
    const asChain = createPortcullisClient({ baseUrl: apiUrl, accessToken: chained.access_token });
    const viaChain = await asChain.orders.create(order);

    const { items } = await asUser.events.list();
    const created = (id: string) =>
      items.find((e) => e.type === 'order.created' && e.subjectId === id);
    expect(created(viaService.id)?.actor).toEqual([svc.clientId]);
    expect(created(own.id)?.actor).toBeUndefined();
    expect(created(viaChain.id)?.actor).toEqual([next.clientId, svc.clientId]);
    // The orders are the user's, whoever wrote them.
    expect([viaService.userId, viaChain.userId]).toEqual([user.id, user.id]);
  });

  it('a wider scope is refused with the OAuth error', async () => {
    const user = await createUser(auth);
    const spa = await publicSpa(auth);
    const tokens = await pkceSignIn(await discover(auth, spa.client_id), user, {
      scope: 'openid orders:read',
    });
    const svc = await service();
    const refusal = await exchange(svc, tokens.access_token, 'orders:write').catch(
      (e: unknown) => e,
    );
    expect(refusal).toBeInstanceOf(OAuthError);
    expect((refusal as OAuthError).error).toBe('invalid_scope');
  });
});
