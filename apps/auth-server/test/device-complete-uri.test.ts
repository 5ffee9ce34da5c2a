import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { browser } from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

const field = (html: string, name: string) =>
  new RegExp(`name="${name}"[^>]*value="([^"]*)"|value="([^"]*)"[^>]*name="${name}"`)
    .exec(html)
    ?.slice(1)
    .find((v) => v !== undefined);

describe('verification_uri_complete (RFC 8628 §3.3.1)', () => {
  test('shows the code with our headers and a button the user presses, no script', async () => {
    const client = await t.admin('POST', '/admin/clients', {
      client_name: 'Living-room TV',
      token_endpoint_auth_method: 'none',
      grant_types: ['device_code'],
    });
    const config = await oidc.discovery(
      new URL(t.issuer),
      client.body.client_id,
      undefined,
      oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid api' });
    expect(auth.verification_uri_complete).toBe(
      `${t.issuer}/device?user_code=${encodeURIComponent(auth.user_code)}`,
    );

    const b = browser();
    const res = await b.get(auth.verification_uri_complete!);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none';/);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Nothing submits by itself: the page asks, with the code filled in.
    expect(html).not.toMatch(/<script|\son[a-z]+=/i);
    expect(html).toContain('Connect a device');
    expect(field(html, 'user_code')).toBe(auth.user_code);
    expect(html).toMatch(/<button type="submit"[^>]*>Continue<\/button>/);

    // Pressing Continue leads to the confirmation naming the client, as a typed code does.
    const confirm = await b.postForm(`${t.issuer}/device`, {
      xsrf: field(html, 'xsrf')!,
      user_code: field(html, 'user_code')!,
    });
    const confirmHtml = await confirm.text();
    expect(confirm.status).toBe(200);
    expect(confirmHtml).toContain('Confirm the device');
    expect(confirmHtml).toContain('Living-room TV');
    expect(confirmHtml).toContain(auth.user_code);
  });

  test('a prefilled code that is not valid is only looked up when the user presses Continue', async () => {
    const b = browser();
    const res = await b.get(`${t.issuer}/device?user_code=${encodeURIComponent('<b>x</b>')}`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).not.toContain('<b>x</b>');
    expect(field(html, 'user_code')).toBe('&lt;b&gt;x&lt;/b&gt;');
    const answer = await b.postForm(`${t.issuer}/device`, {
      xsrf: field(html, 'xsrf')!,
      user_code: '<b>x</b>',
    });
    expect(await answer.text()).toContain('That code is not valid');
  });
});

describe('the device code page', () => {
  test('has no inline script or event handler, and posts the code with its xsrf token', async () => {
    const res = await browser().get(`${t.issuer}/device`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none';/);
    expect(html).not.toMatch(/<script|\son[a-z]+=/i);
    expect(field(html, 'xsrf')).toMatch(/\S{16,}/);
    expect(html).toMatch(/<input[^>]*name="user_code"/);
    expect(html).toMatch(/<button type="submit" form="op.deviceInputForm">Continue<\/button>/);
  });
});
