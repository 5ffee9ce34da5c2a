/**
 * `pnpm admin <command> [options]`: a client of the admin API (ADMIN_URL, ADMIN_TOKEN or
 * DATA_DIR/admin-token). `--json` prints the API's JSON answer.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseCliConfig } from './config.js';

const USAGE = `usage: pnpm admin <command> [options] [--json]

  user:create --email E --password P [--roles admin,editor] [--name N]
  user:list [--limit N] [--after CURSOR]
  client:create [--name N] [--client-id ID] [--redirect-uri URI]... [--grant-types a,b]
                [--auth-method client_secret_basic|client_secret_post|none] [--roles r1,r2]
                [--scope S] [--first-party] [--dpop-bound]
                --dpop-bound: every token request must carry a DPoP proof
  client:list
  client:delete <client_id>
  signing-key:rotate [--alg RS256|ES256] [--now]
                published at once, signs after SIGNING_KEY_PUBLISH_LEAD (default 60 s);
                --now signs at once (emergency: verifiers that cached the JWKS may
                refuse new tokens until they refetch it)
  signing-key:list
  audit [--kind K] [--limit N]`;

const list = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      email: { type: 'string' },
      password: { type: 'string' },
      roles: { type: 'string' },
      name: { type: 'string' },
      'client-id': { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'grant-types': { type: 'string' },
      'auth-method': { type: 'string' },
      scope: { type: 'string' },
      'first-party': { type: 'boolean' },
      'dpop-bound': { type: 'boolean' },
      alg: { type: 'string' },
      now: { type: 'boolean' },
      kind: { type: 'string' },
      limit: { type: 'string' },
      after: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, arg] = positionals;
  if (!command || values.help) {
    console.log(USAGE);
    return command ? 0 : 64;
  }

  const config = parseCliConfig();
  const token =
    config.adminToken ??
    (await readFile(path.join(config.dataDir, 'admin-token'), 'utf8').catch(() => '')).trim();
  if (!token) {
    console.error(
      `no admin token: set ADMIN_TOKEN or create ${path.join(config.dataDir, 'admin-token')}`,
    );
    return 77;
  }

  async function call(method: string, pathname: string, body?: unknown) {
    const res = await fetch(`${config.adminUrl}${pathname}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return {
      status: res.status,
      ok: res.ok,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
  }

  const query = (params: Record<string, string | undefined>) => {
    const q = new URLSearchParams(
      Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
    );
    return q.size ? `?${q}` : '';
  };

  let res;
  switch (command) {
    case 'user:create':
      res = await call('POST', '/admin/users', {
        email: values.email,
        password: values.password,
        roles: list(values.roles) ?? [],
        ...(values.name ? { name: values.name } : {}),
      });
      break;
    case 'user:list':
      res = await call('GET', `/admin/users${query({ limit: values.limit, after: values.after })}`);
      break;
    case 'client:create':
      res = await call('POST', '/admin/clients', {
        ...(values['client-id'] ? { client_id: values['client-id'] } : {}),
        ...(values.name ? { client_name: values.name } : {}),
        ...(values['redirect-uri'] ? { redirect_uris: values['redirect-uri'] } : {}),
        ...(values['grant-types'] ? { grant_types: list(values['grant-types']) } : {}),
        ...(values['auth-method'] ? { token_endpoint_auth_method: values['auth-method'] } : {}),
        ...(values.roles ? { roles: list(values.roles) } : {}),
        ...(values.scope ? { scope: values.scope } : {}),
        ...(values['first-party'] ? { first_party: true } : {}),
        ...(values['dpop-bound'] ? { dpop_bound_access_tokens: true } : {}),
      });
      break;
    case 'client:list':
      res = await call('GET', '/admin/clients');
      break;
    case 'client:delete':
      if (!arg) {
        console.error('usage: pnpm admin client:delete <client_id>');
        return 64;
      }
      res = await call('DELETE', `/admin/clients/${encodeURIComponent(arg)}`);
      break;
    case 'signing-key:rotate':
      res = await call('POST', '/admin/signing-keys', {
        ...(values.alg ? { alg: values.alg } : {}),
        ...(values.now ? { activate: 'now' } : {}),
      });
      break;
    case 'signing-key:list':
      res = await call('GET', '/admin/signing-keys');
      break;
    case 'audit':
      res = await call('GET', `/admin/audit${query({ kind: values.kind, limit: values.limit })}`);
      break;
    default:
      console.error(`unknown command ${command}\n\n${USAGE}`);
      return 64;
  }

  if (values.json) console.log(JSON.stringify(res.body, null, 2));
  else if (!res.ok) console.error(`error ${res.status}: ${JSON.stringify(res.body)}`);
  else if (res.status === 204) console.log('done');
  else if (Array.isArray(res.body['items'])) console.table(res.body['items']);
  else {
    for (const [k, v] of Object.entries(res.body))
      console.log(`${k.padEnd(28)} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
    if (typeof res.body['client_secret'] === 'string')
      console.log('\nThe client secret is shown only this once.');
  }
  return res.ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error((error as Error).message);
    process.exit(1);
  },
);
