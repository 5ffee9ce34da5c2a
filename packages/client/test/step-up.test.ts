import { afterEach, describe, expect, it } from '@jest/globals';
import {
  createPortcullisClient,
  buildAuthorizeUrl,
  parseChallenges,
  StepUpRequiredError,
  stepUpChallengeOf,
  stepUpParams,
  UnauthorizedError,
} from '../src/index.js';
import { json, startServer } from './server.js';
import type { TestServer } from './server.js';

let server: TestServer;
afterEach(() => server?.close());

const MFA = 'urn:portcullis:acr:mfa';
const DESCRIPTION = 'this operation requires a sign-in with a second factor';
/** The API's answer below a step-up rule (README "Step-up"), in the scheme the request used. */
const CHALLENGE =
  `Bearer realm="portcullis", error="insufficient_user_authentication", ` +
  `error_description="${DESCRIPTION}", acr_values="${MFA}", max_age=300, ` +
  `DPoP realm="portcullis", algs="ES256 RS256"`;
const BODY = {
  error: 'insufficient_user_authentication',
  message: DESCRIPTION,
  acr_values: MFA,
  max_age: 300,
};

describe('a step-up challenge', () => {
  it('is a StepUpRequiredError with acrValues and maxAge: no refresh, no sign-out, one request', async () => {
    server = await startServer((_req, res) =>
      json(res, 401, BODY, { 'WWW-Authenticate': CHALLENGE }),
    );
    let refreshes = 0;
    let signOuts = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'password-only',
      refresh: async () => `r${++refreshes}`,
      onSignOut: () => {
        signOuts++;
      },
    });

    const error = await client.users.delete('u1').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(StepUpRequiredError);
    expect(error).not.toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({
      code: 'step_up_required',
      status: 401,
      error: 'insufficient_user_authentication',
      detail: DESCRIPTION,
      acrValues: [MFA],
      maxAge: 300,
    });
    expect(refreshes).toBe(0);
    expect(signOuts).toBe(0);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['DELETE /users/u1']);

    // What the new authorization request asks of the sign-in.
    const url = new URL(
      buildAuthorizeUrl({
        authUrl: 'https://auth.example',
        clientId: 'spa',
        redirectUri: 'https://app.example/cb',
        scope: 'openid api',
        state: 's',
        codeChallenge: 'c',
        extra: stepUpParams(error as StepUpRequiredError),
      }),
    );
    expect(url.searchParams.get('acr_values')).toBe(MFA);
    expect(url.searchParams.get('max_age')).toBe('300');
  });

  it('ends an event stream the same way: no refresh, no reconnect', async () => {
    server = await startServer((_req, res) =>
      json(res, 401, BODY, { 'WWW-Authenticate': CHALLENGE }),
    );
    let refreshes = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'password-only',
      refresh: async () => `r${++refreshes}`,
    });
    const iterate = async (): Promise<void> => {
      for await (const _ of client.stream()) {
        // unreachable
      }
    };

    await expect(iterate()).rejects.toMatchObject({ code: 'step_up_required', acrValues: [MFA] });
    expect(refreshes).toBe(0);
    expect(server.requests).toHaveLength(1);
  });

  it('is read from the body when the header is not visible (cross-origin without exposure)', async () => {
    server = await startServer((_req, res) => json(res, 401, BODY));
    const client = createPortcullisClient({ baseUrl: server.url, accessToken: 't' });
    const error = await client.users.delete('u1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepUpRequiredError);
    expect(error).toMatchObject({ acrValues: [MFA], maxAge: 300 });
  });

  it('leaves other 401s to the refresh-then-retry path', async () => {
    server = await startServer((req, res) => {
      if (req.headers.authorization === 'Bearer fresh') return json(res, 204, {});
      json(
        res,
        401,
        { error: 'invalid_token' },
        {
          'WWW-Authenticate': 'Bearer realm="portcullis", error="invalid_token"',
        },
      );
    });
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'expired',
      refresh: async () => 'fresh',
    });
    await expect(client.users.delete('u1')).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });
});

describe('parsing WWW-Authenticate', () => {
  it('finds the challenge in either scheme, with quoted and token values', () => {
    const dpop = new Headers({
      'WWW-Authenticate':
        `DPoP realm="portcullis", error="insufficient_user_authentication", ` +
        `error_description="a \\"quoted\\" word, and a comma", acr_values="a b", max_age=60, ` +
        `algs="ES256", Bearer realm="portcullis"`,
    });
    expect(stepUpChallengeOf(dpop, undefined)).toEqual({
      acrValues: ['a', 'b'],
      maxAge: 60,
      description: 'a "quoted" word, and a comma',
    });
    expect(parseChallenges(CHALLENGE).map((c) => c.scheme)).toEqual(['bearer', 'dpop']);
  });

  it('is undefined for other challenges and bodies', () => {
    const other = new Headers({ 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    expect(stepUpChallengeOf(other, { error: 'invalid_token' })).toBeUndefined();
    expect(stepUpChallengeOf(new Headers(), 'text')).toBeUndefined();
  });
});
