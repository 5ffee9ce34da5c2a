/**
 * The limiters' Redis going away, through a TCP proxy this test owns: the login form and
 * client authentication fail closed (503 + Retry-After, no unlimited attempt, no sign-in, no
 * token), /readyz names Redis, and everything works again once Redis is back, without a
 * restart.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTcpProxy, viaProxy, type TcpProxy } from '@portcullis/db/testing';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { browser, createClient, createUser, publicSpa, REDIRECT_URI } from '@portcullis/testing';

const redisUrl = process.env['REDIS_URL'];
const withRedis = redisUrl ? describe : describe.skip;

withRedis('Redis outage at the authorization server (runs only with REDIS_URL)', () => {
  let proxy: TcpProxy;
  let t: TestAuthServer;

  beforeAll(async () => {
    const target = new URL(redisUrl!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    t = await startTestAuthServer({ REDIS_URL: viaProxy(redisUrl!, proxy) });
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  /** Opens a login page; returns the form's action, CSRF token and browser. */
  async function loginForm(clientId: string) {
    const b = browser();
    const authorize = new URL('/authorize', t.issuer);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    let url = authorize.href;
    let res = await b.get(url);
    while (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      res = await b.get(url);
    }
    const html = await res.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    return { b, action: `${url}/login`, csrf };
  }

  it('answers the login form with 503 while Redis is unreachable, and recovers', async () => {
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const form = await loginForm(spa.client_id);

    await proxy.cut();
    const refused = await form.b.postForm(form.action, {
      csrf: form.csrf,
      email: user.email,
      password: user.password,
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.headers.get('location')).toBeNull();
    const ready = await fetch(`${t.server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'unavailable', redis: 'unreachable' });

    await proxy.restore();
    let status = 0;
    for (let i = 0; i < 50 && status !== 303; i++) {
      const again = await loginForm(spa.client_id);
      status = (
        await again.b.postForm(again.action, {
          csrf: again.csrf,
          email: user.email,
          password: user.password,
        })
      ).status;
      if (status !== 303) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(303);
    expect((await fetch(`${t.server.url}/readyz`)).status).toBe(200);
  }, 60_000);

  it('answers client authentication at /token with 503 while Redis is unreachable, and recovers', async () => {
    const service = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const token = () =>
      fetch(`${t.server.url}/token`, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${service.client_id}:${service.client_secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
      });

    await proxy.cut();
    const refused = await token();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable' });

    await proxy.restore();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await token()).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
  }, 60_000);
});
