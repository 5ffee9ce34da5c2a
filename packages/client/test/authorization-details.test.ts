import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { parseApiConfig, startApiServer, type RunningApiServer } from '@portcullis/api';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { browserLogin, createClient, createUser, REDIRECT_URI } from '@portcullis/testing';
import { pino } from 'pino';
import {
  ApiError,
  buildAuthorizeUrl,
  createPkcePair,
  createPortcullisClient,
  createState,
  exchangeCode,
  portcullisEndpoints,
  pushAuthorizationRequest,
  type AuthorizeUrlParams,
} from '../src/index.js';

// README "Payment authorization details (RFC 9396)" with this SDK: the details at PAR and
// /authorize, the token's details, and a payment made once with them.

let auth: TestAuthServer;
let api: RunningApiServer;
let dataDir: string;
beforeAll(async () => {
  const logger = pino({ level: 'silent' });
  auth = await startTestAuthServer({}, { logger });
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-sdk-rar-'));
  api = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: '0',
      ISSUER: auth.issuer,
      API_AUDIENCE: auth.apiAudience,
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

it.each(['par', 'authorize'] as const)(
  'a payment approved through %s pays once',
  async (how) => {
    const user = await createUser(auth, ['editor']);
    const client = await createClient(auth, {
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
    });
    const owner = createPortcullisClient({
      baseUrl: api.url,
      accessToken: await signIn({ scope: 'openid api' }),
    });
    const order = await owner.orders.create({
      customer: 'ACME Ltd',
      amount: 4200,
      currency: 'EUR',
    });
    const detail = {
      type: 'urn:portcullis:payment',
      amount: 4200,
      currency: 'EUR',
      orderId: order.id,
    };
    const token = await signIn({ scope: 'openid payments:create', authorizationDetails: [detail] });

    const payer = createPortcullisClient({ baseUrl: api.url, accessToken: token });
    const body = { orderId: order.id, amount: 4200, currency: 'EUR' };
    expect(await payer.payments.create(body)).toMatchObject({ ...body, status: 'succeeded' });
    const again = await payer.payments.create(body).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiError);
    expect(again).toMatchObject({ status: 403, error: 'insufficient_authorization_details' });

    async function signIn(
      extra: Pick<AuthorizeUrlParams, 'scope' | 'authorizationDetails'>,
    ): Promise<string> {
      const pkce = await createPkcePair();
      const params: AuthorizeUrlParams = {
        authUrl: auth.issuer,
        clientId: client.client_id,
        redirectUri: REDIRECT_URI,
        state: createState(),
        codeChallenge: pkce.codeChallenge,
        resource: auth.apiAudience,
        ...extra,
      };
      const url =
        how === 'par'
          ? (await pushAuthorizationRequest({ ...params, clientSecret: client.client_secret! })).url
          : buildAuthorizeUrl(params);
      const pages: string[] = [];
      const callback = await browserLogin(url, user, { pages });
      const tokens = await exchangeCode({
        tokenUrl: portcullisEndpoints(auth.issuer).tokenEndpoint,
        clientId: client.client_id,
        clientSecret: client.client_secret!,
        code: callback.searchParams.get('code')!,
        redirectUri: REDIRECT_URI,
        codeVerifier: pkce.codeVerifier,
      });
      if (extra.authorizationDetails) {
        expect(pages.join('')).toContain('One payment of at most <strong>€42.00</strong>');
        expect(tokens.authorization_details).toEqual([
          { ...detail, authorizationId: expect.any(String) },
        ]);
      }
      return tokens.access_token;
    }
  },
  60_000,
);
