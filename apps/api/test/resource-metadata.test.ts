import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { resourceMetadataUrl } from '@portcullis/claims';
import { BUILT_IN_RESOURCE_ID } from '@portcullis/db';
import { until } from '@portcullis/testing';
import { startTestApi, type AuthServerTestApi } from './helpers/harness.js';

// RFC 9728: the API names its authorization server, and every 401 points at that document.

let api: AuthServerTestApi;
const METADATA = '/.well-known/oauth-protected-resource';

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

/** The `resource_metadata` of a challenge, as a path on the API under test. */
function metadataParameter(header: string | null): string | undefined {
  return /(?:^|[\s,])resource_metadata="([^"]*)"/.exec(header ?? '')?.[1];
}

describe('GET /.well-known/oauth-protected-resource', () => {
  test('has the RFC 9728 members, from the configuration the token checks use', async () => {
    const res = await api.request('GET', METADATA);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = res.body;
    // §2: `resource` is REQUIRED, the rest OPTIONAL; each present one has its type.
    expect(body.resource).toBe(api.config.audience);
    expect(body.authorization_servers).toEqual([api.config.issuer]);
    expect(body.bearer_methods_supported).toEqual(['header']);
    expect(body.dpop_bound_access_tokens_required).toBe(false);
    expect(body.resource_documentation).toBe(`${api.config.audience}/openapi.json`);
    expect(body.scopes_supported).toEqual(expect.arrayContaining(['api', 'orders:read']));
    for (const member of ['scopes_supported', 'dpop_signing_alg_values_supported']) {
      expect(Array.isArray(body[member])).toBe(true);
      expect(body[member].every((v: unknown) => typeof v === 'string' && v !== '')).toBe(true);
    }
    expect(new URL(body.resource).hash).toBe('');
  });

  test('offers only scopes the auth server offers, and the DPoP algorithms the 401 names', async () => {
    const { body } = await api.request('GET', METADATA);
    const discovery = (await (
      await fetch(`${api.config.issuer}/.well-known/oauth-authorization-server`)
    ).json()) as { scopes_supported: string[]; issuer: string };
    expect(discovery.issuer).toBe(body.authorization_servers[0]);
    expect(discovery.scopes_supported).toEqual(expect.arrayContaining(body.scopes_supported));
    const challenge = (await api.request('GET', '/orders')).headers.get('www-authenticate');
    const algs = /DPoP [^]*?algs="([^"]*)"/.exec(challenge ?? '')?.[1]?.split(' ');
    expect(algs).toEqual(body.dpop_signing_alg_values_supported);
  });

  test('lists the permissions registered for the API, within a poll of a change', async () => {
    const permission = { resource_id: BUILT_IN_RESOURCE_ID, name: 'orders:archive' };
    const listed = async () =>
      ((await api.request('GET', METADATA)).body.scopes_supported as string[]).includes(
        'orders:archive',
      );
    expect(await listed()).toBe(false);
    await api.database.db('resource_permissions').insert(permission);
    try {
      await until(listed, (yes) => yes, 5000);
    } finally {
      await api.database.db('resource_permissions').where(permission).del();
    }
    await until(listed, (yes) => !yes, 5000);
  });

  test('is listed in the OpenAPI document', async () => {
    const { body } = await api.request('GET', '/openapi.json');
    expect(Object.keys(body.paths)).toContain(METADATA);
  });
});

describe('every 401 names the metadata (WWW-Authenticate resource_metadata)', () => {
  const expected = () => `${api.config.audience}${METADATA}`;

  test('no credential: a bare Bearer challenge first, with resource_metadata', async () => {
    const res = await api.request('GET', '/orders');
    expect(res.status).toBe(401);
    const header = res.headers.get('www-authenticate')!;
    // The MCP SDK reads a challenge only when the header begins with `Bearer `.
    expect(header.startsWith('Bearer ')).toBe(true);
    expect(metadataParameter(header)).toBe(expected());
    // The URL names the API's own document (the test API's origin stands in for the audience).
    const path = new URL(metadataParameter(header)!).pathname;
    expect((await api.request('GET', path)).body.resource).toBe(api.config.audience);
  });

  test('an invalid token, a DPoP request and a wrong password say it too', async () => {
    const invalid = await api.request('GET', '/orders', { token: 'not-a-jwt' });
    expect(invalid.status).toBe(401);
    expect(metadataParameter(invalid.headers.get('www-authenticate'))).toBe(expected());

    const dpop = await api.request('GET', '/orders', { headers: { authorization: 'DPoP x' } });
    expect(dpop.status).toBe(401);
    expect(metadataParameter(dpop.headers.get('www-authenticate'))).toBe(expected());

    const login = await api.request('POST', '/login', {
      body: { email: 'nobody@test.example', password: 'wrong password here' },
    });
    expect(login.status).toBe(401);
    expect(metadataParameter(login.headers.get('www-authenticate'))).toBe(expected());
  });
});

describe('resourceMetadataUrl (RFC 9728 §3.1)', () => {
  test('inserts the well-known path between the host and the path', () => {
    expect(resourceMetadataUrl('https://api.example.com')).toBe(
      'https://api.example.com/.well-known/oauth-protected-resource',
    );
    expect(resourceMetadataUrl('https://example.com/api/')).toBe(
      'https://example.com/.well-known/oauth-protected-resource/api',
    );
  });
});
