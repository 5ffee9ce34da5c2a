import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createSharedDenyList } from '@portcullis/db';
import { rethrow } from '@portcullis/testing';
import { pino } from 'pino';
import { createApiApp, routesOf } from '../src/app.js';
import { startTestApi, type AuthServerTestApi } from './helpers/harness.js';

let api: AuthServerTestApi;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed JSON document, asserted on below
let document: any;

beforeAll(async () => {
  api = await startTestApi();
  document = (await api.request('GET', '/openapi.json')).body;
});
afterAll(() => api.close());

describe('GET /openapi.json', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('describes every route the router serves', () => {
    // The same construction the server uses, so the table is what it serves.
    const app = createApiApp(api.config, {
      db: api.database.db,
      logger: pino({ level: 'silent' }),
      resolvers: [],
      denyList: createSharedDenyList({ onError: rethrow }),
    });
    const { router } = routesOf(app)!;
    const served = router.stack.flatMap((layer) =>
      layer.methods
        .filter((m) => m !== 'HEAD')
        .map((m) => `${m.toLowerCase()} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
    );
    const described = Object.entries(document.paths as Record<string, object>).flatMap(
      ([path, item]) => Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(served.length).toBeGreaterThanOrEqual(14);
    expect(described.sort()).toEqual([...new Set(served)].sort());
  });

  test('security schemes: oauth2 (code + client credentials), bearer JWT, API key, cookie sid', async () => {
    const schemes = document.components.securitySchemes;
    // The endpoints the running auth server publishes in its discovery document.
    const discovery = (await (
      await fetch(`${api.auth.issuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, string>;
    expect(schemes.oauth2.flows.authorizationCode.tokenUrl).toBe(discovery['token_endpoint']);
    expect(schemes.oauth2.flows.authorizationCode.authorizationUrl).toBe(
      discovery['authorization_endpoint'],
    );
    expect(schemes.oauth2.flows.clientCredentials.tokenUrl).toBe(discovery['token_endpoint']);
    expect(schemes.oauth2.description).toMatch(/device/i);
    expect(schemes.bearerJwt).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(schemes.apiKey).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'sk_live',
    });
    expect(schemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'sid' });
    expect(document.paths['/orders'].get.security).toContainEqual({ oauth2: ['orders:read'] });
    expect(document.paths['/healthz'].get.security).toEqual([]);
  });

  test('request schemas are the validating ones: strict bodies, bounded limit, repeatable status', () => {
    const create = document.components.schemas.CreateOrder;
    expect(create.additionalProperties).toBe(false);
    expect(Object.keys(create.properties)).not.toContain('status');
    const params = document.paths['/orders'].get.parameters as {
      name: string;
      schema: Record<string, unknown>;
    }[];
    const limit = params.find((p) => p.name === 'limit')!;
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
    expect(params.find((p) => p.name === 'status')!.schema.type).toBe('array');
  });
});
