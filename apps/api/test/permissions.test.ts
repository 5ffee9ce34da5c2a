import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ACR } from '@portcullis/claims';
import { makeUser } from './helpers/factories.js';
import { startTestApi, type IssuerTestApi } from './helpers/harness.js';

/**
 * Every route declares its permission once, in its definition; the router enforces it
 * before anything else about the request is looked at (README "Trust model", its roles).
 */
let api: IssuerTestApi;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed JSON document
let document: any;

/**
 * Routes without a permission: public ones (no credential, or one of their own: the
 * pre-signed PUT, the sign-in) and POST /logout/all, which any signed-in user may call.
 */
const WITHOUT_PERMISSION = [
  'get /.well-known/oauth-protected-resource',
  'get /healthz',
  'get /openapi.json',
  'get /readyz',
  'post /login',
  'post /logout',
  'post /logout/all',
  'put /uploads/direct/{id}',
];

interface Operation {
  method: string;
  path: string;
  permission: string | undefined;
  /** An event stream: its answer never ends, so only its status is read. */
  stream: boolean;
}

function operations(): Operation[] {
  return Object.entries(document.paths as Record<string, Record<string, Record<string, unknown>>>)
    .flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({
        method,
        path,
        permission: op['x-permission'] as string | undefined,
        stream: JSON.stringify(op['responses'] ?? {}).includes('text/event-stream'),
      })),
    )
    .sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}

/** A concrete path for a template; parameters that name nothing (they are never reached). */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x');

async function streamStatus(path: string, token: string): Promise<number> {
  const res = await fetch(api.url + path, { headers: { authorization: `Bearer ${token}` } });
  await res.body?.cancel();
  return res.status;
}

beforeAll(async () => {
  api = await startTestApi({ issuer: 'test' });
  document = (await api.request('GET', '/openapi.json')).body;
});
afterAll(() => api.close());

describe('a permission is declared once and enforced by the route', () => {
  test('every route either declares a permission or is one of the public ones', () => {
    const undeclared = operations()
      .filter((op) => !op.permission)
      .map((op) => `${op.method} ${op.path}`);
    expect(undeclared.sort()).toEqual(WITHOUT_PERMISSION);
    expect(operations().filter((op) => op.permission).length).toBeGreaterThanOrEqual(20);
  });

  test('a caller without the permission gets 403 before its input is looked at', async () => {
    // A valid token whose scope grants nothing: authenticated, no permission.
    const token = await api.token('nobody', ['admin'], { scope: 'openid' });
    const answers: Record<string, number> = {};
    for (const op of operations().filter((o) => o.permission)) {
      // Bodies that would fail validation, and ids that name nothing: the 403 comes first.
      const reply = await api.request(op.method.toUpperCase(), concrete(op.path), {
        token,
        ...(['post', 'put', 'patch'].includes(op.method) ? { body: { unexpected: true } } : {}),
      });
      answers[`${op.method} ${op.path}`] = reply.status;
    }
    const refused = Object.fromEntries(Object.keys(answers).map((name) => [name, 403]));
    expect(answers).toEqual(refused);
  });

  test('holding exactly the declared permission passes the route’s check', async () => {
    const tokens = new Map<string, string>();
    const answers: Record<string, number> = {};
    for (const op of operations().filter((o) => o.permission)) {
      const permission = op.permission!;
      if (!tokens.has(permission))
        tokens.set(permission, await api.token('holder', ['admin'], { scope: permission }));
      const token = tokens.get(permission)!;
      const status = op.stream
        ? await streamStatus(concrete(op.path), token)
        : (
            await api.request(op.method.toUpperCase(), concrete(op.path), {
              token,
              ...(['post', 'put', 'patch'].includes(op.method)
                ? { body: { unexpected: true } }
                : {}),
            })
          ).status;
      answers[`${op.method} ${op.path} (${permission})`] = status;
    }
    const refusals = Object.entries(answers).filter(([, status]) => status === 403);
    expect(refusals).toEqual([]);
  });

  test('a viewer creating an order gets the 403 its role earns, not validation details', async () => {
    const token = await api.token('viewer', ['viewer']);
    const reply = await api.request('POST', '/orders', { token, body: { items: 'not a list' } });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({ error: 'forbidden' });
  });
});

/** The parameters of each challenge of a `WWW-Authenticate` header, by scheme. */
function challenges(header: string | null): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let current: Record<string, string> | undefined;
  for (const match of (header ?? '').matchAll(
    /(?:^|,\s*)(?:(Bearer|DPoP)\s+)?([a-z_]+)=("[^"]*"|[^\s,]+)/g,
  )) {
    if (match[1]) current = out[match[1]] = {};
    current![match[2]!] = match[3]!.replace(/^"|"$/g, '');
  }
  return out;
}

describe('the challenge names the route’s permission as the scope to ask for (RFC 6750 §3)', () => {
  test('a 401 without a credential, or with a bad one, names it in both challenges', async () => {
    const answers: Record<string, [number, string?, string?, string?]> = {};
    const expected: typeof answers = {};
    for (const op of operations().filter((o) => o.permission)) {
      const name = `${op.method} ${op.path}`;
      const bare = await api.request(op.method.toUpperCase(), concrete(op.path));
      const bad = await api.request(op.method.toUpperCase(), concrete(op.path), {
        token: 'not-a-jwt',
      });
      const of = challenges(bare.headers.get('www-authenticate'));
      answers[name] = [
        bare.status,
        of['Bearer']?.['scope'],
        of['DPoP']?.['scope'],
        challenges(bad.headers.get('www-authenticate'))['Bearer']?.['scope'],
      ];
      expected[name] = [401, op.permission, op.permission, op.permission];
    }
    expect(answers).toEqual(expected);
  });

  test('a 403 for a token whose scope left the permission out: insufficient_scope naming it', async () => {
    // The roles hold every permission; only the token's scope (`openid`) keeps them out.
    const token = await api.token('narrow', ['admin'], { scope: 'openid' });
    const answers: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const op of operations().filter((o) => o.permission)) {
      const reply = await api.request(op.method.toUpperCase(), concrete(op.path), { token });
      const bearer = challenges(reply.headers.get('www-authenticate'))['Bearer'];
      answers[`${op.method} ${op.path}`] = [
        reply.status,
        reply.body,
        bearer?.['error'],
        bearer?.['scope'],
      ];
      expected[`${op.method} ${op.path}`] = [
        403,
        { error: 'forbidden' },
        'insufficient_scope',
        op.permission,
      ];
    }
    expect(answers).toEqual(expected);
  });

  test('a 403 that more scope cannot lift (the role, or an API key) has no insufficient_scope', async () => {
    const viewer = await api.token('viewer', ['viewer']);
    const refused = await api.request('POST', '/orders', { token: viewer, body: {} });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBeNull();

    const owner = await makeUser(api.database.db, ['admin']);
    const created = await api.request('POST', '/api-keys', {
      // Creating a key is a step-up route: a recent second-factor sign-in.
      token: await api.issuer.tokenFor({
        sub: owner.id,
        roles: owner.roles,
        claims: { acr: ACR.mfa, auth_time: Math.floor(Date.now() / 1000) },
      }),
      body: { name: 'reader', permissions: ['orders:read'] },
    });
    expect(created.status).toBe(201);
    const key = (created.body as { key: string }).key;
    const denied = await api.request('GET', '/users', { token: key });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toBeNull();
  });

  test('a route that needs no particular permission challenges without a scope', async () => {
    const reply = await api.request('POST', '/logout/all');
    expect(reply.status).toBe(401);
    const of = challenges(reply.headers.get('www-authenticate'));
    expect(of['Bearer']).toBeDefined();
    expect(of['Bearer']!['scope']).toBeUndefined();
    expect(of['DPoP']!['scope']).toBeUndefined();
  });
});
