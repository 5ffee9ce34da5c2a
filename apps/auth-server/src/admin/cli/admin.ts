/** `npm run admin -- <command>`: a client of the admin API; exits 0, 1, 64, 69 or 78. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { EX_CONFIG } from '@portcullis/observability';
import { ConfigError, parseCliConfig } from './config.js';
import type { ResourceView } from '../api/resource-routes.js';

const USAGE = `usage: npm run admin -- <command> [options] [--json]

  user:create --email E --password P [--roles admin,editor] [--name N]
  user:list [--limit N] [--after CURSOR]
  user:roles <user_id> --roles admin,editor   replaces the roles (--roles '' for none)
  user:disable <user_id>        no sign-in; ends their sessions and tokens
  user:enable <user_id>
  user:reset-password <user_id> (--password P | --generate)
                ends their sessions and tokens; --generate prints a new one once
  user:force-reset <user_id>    the password stops working, sessions and tokens end,
                and the user is mailed a link to choose a new one
  user:resend-verification <user_id>  mails a new address-confirmation link (a sign-up)
  user:factors <user_id>        the user's second factors and recovery codes left
  user:reset-factors <user_id>  removes them all (a lost phone or key; audited)
  user:sessions <user_id>       the user's sessions (browsers) and grants (apps)
  user:end-sessions <user_id> [--session ID]
                ends every session and token of the user, or the one session
  client:create [--name N] [--client-id ID] [--redirect-uri URI]... [--grant-types a,b]
                [--auth-method client_secret_basic|client_secret_post|private_key_jwt|none]
                [--jwks FILE | --jwks-uri URL] [--auth-alg ES256|PS256|RS256]
                [--roles r1,r2] [--scope S] [--first-party] [--dpop-bound] [--introspection]
                [--require-par] [--native] [--fapi] [--legacy-assertion-audience]
                [--exchange-audience URL]... [--impersonation]
                --dpop-bound: every token request must carry a DPoP proof
                --jwks/--jwks-uri: the public keys of a private_key_jwt client
                --introspection: a resource server that may call /token/introspection
                --native: an app on the user's device (loopback or com.example.app:/cb)
                --require-par: /authorize takes only a pushed request_uri (RFC 9126)
                --fapi: FAPI 2.0 (private_key_jwt with --jwks/--jwks-uri; PAR and
                DPoP implied; ES256 assertions and ID tokens)
                --legacy-assertion-audience: private_key_jwt assertions may also name
                the token endpoint URL as aud (Authlib's default; not with --fapi;
                see docs/security.md for the risk)
                --exchange-audience: may exchange user tokens for this resource
                (RFC 8693 token exchange; adds the grant; only for a client that
                authenticates, not --auth-method none); --impersonation: may ask
                for tokens without act
  client:list
  client:update <client_id> [--name N] [--redirect-uri URI]... [--scope S] [--roles r1,r2]
                [--exchange-audience URL]... [--impersonation] [--no-exchange]
                replaces what is given (--scope '' or --roles '' removes it)
  client:rotate-secret <client_id>   a new secret, shown once; the old one stops working
  client:delete <client_id>
  registration:token [--ttl SECONDS]
                an initial access token for one dynamic registration (RFC 7591),
                shown once; needs REGISTRATION=token or open
  signing-key:rotate [--alg RS256|ES256] [--now]
                published at once, signs after SIGNING_KEY_PUBLISH_LEAD (default 60 s);
                --now signs at once (emergency: verifiers that cached the JWKS may
                refuse new tokens until they refetch it)
  signing-key:list
  resource:list                 the registered APIs (resource servers)
  resource:create <identifier> --name N [--permission name=description]...
                [--ttl S] [--alg RS256|ES256] [--dpop] [--deny-list]
                registers an API: the identifier is its RFC 8707 resource and its
                tokens' aud; --ttl: access-token lifetime (60-3600 s); --dpop: its
                tokens must be DPoP-bound; --deny-list: it follows revocations
  resource:show <id|identifier>
  resource:update <id|identifier> [--name N] [--identifier URL] [--ttl S|default]
                [--alg A|default] [--dpop|--no-dpop] [--deny-list|--no-deny-list]
                [--permission name=description]...   adds or describes permissions
  resource:delete <id|identifier>  its permissions go, and every role's grants on it
  resource:permission:set <id|identifier> <name> [--description D]
  resource:permission:delete <id|identifier> <name>  roles granting it lose it
  role:list                     the roles and the permissions each grants, by resource
  role:set <name> --permissions a,b [--resource IDENTIFIER] [--description D]
                creates the role or replaces its permissions on one resource (default
                this server's API; --permissions '' for none); its grants on other
                resources stay; the API applies it within seconds
  role:delete <name>            refused while a user or client holds it, and for built-ins
  permission:list               the permissions a role may grant on this server's API
  signing-key:retire <kid>      a next or retired key leaves the JWKS now (tokens it signed
                stop verifying once verifiers refetch it); not the signing key
  audit [--kind K] [--actor A] [--subject USER_ID] [--since T] [--until T] [--limit N]
                --actor: a user id or admin-token; T: ISO 8601 with offset`;

const list = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/** --exchange-audience and --impersonation as client metadata `token_exchange`. */
function exchangePolicy(values: { 'exchange-audience'?: string[]; impersonation?: boolean }) {
  const audiences = values['exchange-audience'];
  if (!audiences?.length) return {};
  return {
    token_exchange: { audiences, ...(values.impersonation ? { impersonation: true } : {}) },
  };
}

/** `--permission name=description` (or a name alone) as the admin API's permission. */
function permissionOf(flag: string): { name: string; description?: string } {
  const at = flag.indexOf('=');
  return at < 0 ? { name: flag } : { name: flag.slice(0, at), description: flag.slice(at + 1) };
}

/**
 * --ttl and --alg as resource settings: `default` (update) is null, the server's own; a --ttl
 * that is no whole number goes as given, for the admin API to name.
 */
function resourceSettings(values: { ttl?: string; alg?: string }, { update = false } = {}) {
  const { ttl, alg } = values;
  const reset = (v: string | undefined) => update && v === 'default';
  return {
    ...(ttl === undefined ? {} : { accessTokenTtl: reset(ttl) ? null : wholeNumber(ttl) }),
    ...(alg === undefined ? {} : { signingAlg: reset(alg) ? null : alg }),
  };
}

const wholeNumber = (v: string): number | string => (/^\d{1,9}$/.test(v) ? Number(v) : v);

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
      'require-par': { type: 'boolean' },
      native: { type: 'boolean' },
      fapi: { type: 'boolean' },
      'legacy-assertion-audience': { type: 'boolean' },
      jwks: { type: 'string' },
      'jwks-uri': { type: 'string' },
      'auth-alg': { type: 'string' },
      introspection: { type: 'boolean' },
      alg: { type: 'string' },
      now: { type: 'boolean' },
      kind: { type: 'string' },
      actor: { type: 'string' },
      subject: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string' },
      ttl: { type: 'string' },
      after: { type: 'string' },
      generate: { type: 'boolean' },
      session: { type: 'string' },
      'exchange-audience': { type: 'string', multiple: true },
      impersonation: { type: 'boolean' },
      'no-exchange': { type: 'boolean' },
      permissions: { type: 'string' },
      description: { type: 'string' },
      resource: { type: 'string' },
      permission: { type: 'string', multiple: true },
      identifier: { type: 'string' },
      dpop: { type: 'boolean' },
      'no-dpop': { type: 'boolean' },
      'deny-list': { type: 'boolean' },
      'no-deny-list': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, arg, second] = positionals;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!command) {
    console.error(USAGE);
    return 64;
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
    const url = `${config.adminUrl}${pathname}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(15_000),
      });
      text = await res.text();
    } catch (error) {
      throw new Unreachable(`cannot reach the admin API at ${method} ${url}: ${reason(error)}`);
    }
    const json = parseJson(text);
    if (json === undefined || !res.headers.get('content-type')?.includes('application/json')) {
      if (res.status === 204) return { status: 204, ok: true, body: {} };
      throw new Unreachable(
        `${method} ${url} answered ${res.status} ${res.headers.get('content-type') ?? 'without a content type'}: not the admin API`,
      );
    }
    return { status: res.status, ok: res.ok, body: json };
  }

  const query = (params: Record<string, string | undefined>) => {
    const q = new URLSearchParams(
      Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
    );
    return q.size ? `?${q}` : '';
  };

  const userPath = (id: string) => `/admin/users/${encodeURIComponent(id)}`;
  const clientPath = (id: string) => `/admin/clients/${encodeURIComponent(id)}`;
  const rolePath = (name: string) => `/admin/roles/${encodeURIComponent(name)}`;

  async function resources(): Promise<ResourceView[]> {
    const listed = await call('GET', '/admin/resources');
    if (!listed.ok) throw new Error(`error ${listed.status}: ${JSON.stringify(listed.body)}`);
    return listed.body['items'] as ResourceView[];
  }

  /** A resource named by its id or by its identifier (a URL): the path of it. */
  async function resourcePath(ref: string): Promise<string> {
    let id = ref;
    if (ref.includes('://')) {
      const found = (await resources()).find((r) => r.identifier === ref);
      if (!found) throw new Error(`no resource has the identifier ${ref} (resource:list)`);
      id = found.id;
    }
    return `/admin/resources/${encodeURIComponent(id)}`;
  }

  /** PATCHes the settings given, then PUTs each --permission; the last answer (a resource view). */
  async function updateResource(ref: string) {
    if (values.dpop && values['no-dpop']) return undefined;
    if (values['deny-list'] && values['no-deny-list']) return undefined;
    const patch = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.identifier !== undefined ? { identifier: values.identifier } : {}),
      ...resourceSettings(values, { update: true }),
      ...(values.dpop || values['no-dpop'] ? { dpopRequired: values.dpop === true } : {}),
      ...(values['deny-list'] || values['no-deny-list']
        ? { followsDenyList: values['deny-list'] === true }
        : {}),
    };
    const permissions = (values.permission ?? []).map(permissionOf);
    if (Object.keys(patch).length === 0 && permissions.length === 0) return undefined;
    const at = await resourcePath(ref);
    let answer = Object.keys(patch).length > 0 ? await call('PATCH', at, patch) : undefined;
    for (const { name, ...description } of permissions) {
      if (answer && !answer.ok) break;
      answer = await call('PUT', `${at}/permissions/${encodeURIComponent(name)}`, description);
    }
    return answer;
  }

  /** The built-in resource's identifier: this server's API_AUDIENCE. */
  const builtInIdentifier = async () => (await resources()).find((r) => r.builtIn)?.identifier;

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
    case 'user:roles':
      if (!arg || values.roles === undefined) {
        console.error('usage: npm run admin -- user:roles <user_id> --roles r1,r2');
        return 64;
      }
      res = await call('PATCH', userPath(arg), { roles: list(values.roles) ?? [] });
      break;
    case 'user:disable':
    case 'user:enable':
      if (!arg) {
        console.error(`usage: npm run admin -- ${command} <user_id>`);
        return 64;
      }
      res = await call('POST', `${userPath(arg)}/${command.slice('user:'.length)}`);
      break;
    case 'user:reset-password':
      if (!arg || (values.password === undefined) === (values.generate === undefined)) {
        console.error(
          'usage: npm run admin -- user:reset-password <user_id> (--password P | --generate)',
        );
        return 64;
      }
      res = await call(
        'POST',
        `${userPath(arg)}/password`,
        values.generate ? { generate: true } : { password: values.password },
      );
      break;
    case 'user:force-reset':
      if (!arg) {
        console.error('usage: npm run admin -- user:force-reset <user_id>');
        return 64;
      }
      res = await call('POST', `${userPath(arg)}/password-reset`);
      break;
    case 'user:resend-verification':
      if (!arg) {
        console.error('usage: npm run admin -- user:resend-verification <user_id>');
        return 64;
      }
      res = await call('POST', `${userPath(arg)}/verification`);
      break;
    case 'user:factors':
    case 'user:reset-factors':
      if (!arg) {
        console.error(`usage: npm run admin -- ${command} <user_id>`);
        return 64;
      }
      res = await call(
        command === 'user:factors' ? 'GET' : 'DELETE',
        `/admin/users/${encodeURIComponent(arg)}/factors`,
      );
      break;
    case 'user:sessions':
    case 'user:end-sessions': {
      if (!arg) {
        console.error(`usage: npm run admin -- ${command} <user_id>`);
        return 64;
      }
      const sessions = `${userPath(arg)}/sessions`;
      if (command === 'user:sessions') {
        res = await call('GET', sessions);
        if (res.ok && !values.json) {
          console.log(`Sessions\n${rows(res.body['items'] as Record<string, unknown>[])}`);
          console.log(`\nGrants\n${rows(res.body['grants'] as Record<string, unknown>[])}`);
          return 0;
        }
      } else
        res = await call(
          'DELETE',
          values.session ? `${sessions}/${encodeURIComponent(values.session)}` : sessions,
        );
      break;
    }
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
        ...(values.jwks
          ? { jwks: JSON.parse(await readFile(values.jwks, 'utf8')) as unknown }
          : {}),
        ...(values['jwks-uri'] ? { jwks_uri: values['jwks-uri'] } : {}),
        ...(values['auth-alg'] ? { token_endpoint_auth_signing_alg: values['auth-alg'] } : {}),
        ...(values.introspection ? { introspection: true } : {}),
        ...(values['require-par'] ? { require_pushed_authorization_requests: true } : {}),
        ...(values.native ? { application_type: 'native' } : {}),
        ...(values.fapi ? { fapi: '2.0' } : {}),
        ...(values['legacy-assertion-audience'] ? { client_assertion_legacy_audience: true } : {}),
        ...exchangePolicy(values),
      });
      break;
    case 'client:list':
      res = await call('GET', '/admin/clients');
      break;
    case 'client:update': {
      if (!arg) {
        console.error(
          'usage: npm run admin -- client:update <client_id> [--name N] [--redirect-uri URI]... [--scope S] [--roles r1,r2]',
        );
        return 64;
      }
      res = await call('PATCH', clientPath(arg), {
        ...(values.name !== undefined ? { client_name: values.name } : {}),
        ...(values['redirect-uri'] ? { redirect_uris: values['redirect-uri'] } : {}),
        ...(values.scope !== undefined ? { scope: values.scope } : {}),
        ...(values.roles !== undefined ? { roles: list(values.roles) ?? [] } : {}),
        ...(values['no-exchange'] ? { token_exchange: null } : exchangePolicy(values)),
      });
      break;
    }
    case 'client:rotate-secret':
      if (!arg) {
        console.error('usage: npm run admin -- client:rotate-secret <client_id>');
        return 64;
      }
      res = await call('POST', `${clientPath(arg)}/secret`);
      break;
    case 'client:delete':
      if (!arg) {
        console.error('usage: npm run admin -- client:delete <client_id>');
        return 64;
      }
      res = await call('DELETE', clientPath(arg));
      break;
    case 'registration:token':
      res = await call('POST', '/admin/registration-tokens', {
        ...(values.ttl ? { ttl: Number(values.ttl) } : {}),
      });
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
    case 'signing-key:retire':
      if (!arg) {
        console.error('usage: npm run admin -- signing-key:retire <kid>');
        return 64;
      }
      res = await call('POST', `/admin/signing-keys/${encodeURIComponent(arg)}/retire`);
      break;
    case 'resource:list':
      res = await call('GET', '/admin/resources');
      if (res.ok && !values.json) {
        console.log(rows((res.body['items'] as ResourceView[]).map(resourceRow)));
        return 0;
      }
      break;
    case 'resource:create':
      if (!arg || values.name === undefined) {
        console.error(
          'usage: npm run admin -- resource:create <identifier> --name N [--permission name=description]... [--ttl S] [--alg A] [--dpop] [--deny-list]',
        );
        return 64;
      }
      res = await call('POST', '/admin/resources', {
        identifier: arg,
        name: values.name,
        ...(values.permission ? { permissions: values.permission.map(permissionOf) } : {}),
        ...resourceSettings(values),
        ...(values.dpop ? { dpopRequired: true } : {}),
        ...(values['deny-list'] ? { followsDenyList: true } : {}),
      });
      break;
    case 'resource:show':
    case 'resource:delete':
      if (!arg) {
        console.error(`usage: npm run admin -- ${command} <id|identifier>`);
        return 64;
      }
      res = await call(command === 'resource:show' ? 'GET' : 'DELETE', await resourcePath(arg));
      break;
    case 'resource:update': {
      const answer = arg ? await updateResource(arg) : undefined;
      if (!answer) {
        console.error(
          'usage: npm run admin -- resource:update <id|identifier> [--name N] [--identifier URL] [--ttl S|default] [--alg A|default] [--dpop|--no-dpop] [--deny-list|--no-deny-list] [--permission name=description]...',
        );
        return 64;
      }
      res = answer;
      break;
    }
    case 'resource:permission:set':
    case 'resource:permission:delete': {
      if (!arg || !second) {
        console.error(`usage: npm run admin -- ${command} <id|identifier> <name>`);
        return 64;
      }
      const at = `${await resourcePath(arg)}/permissions/${encodeURIComponent(second)}`;
      res =
        command === 'resource:permission:set'
          ? await call('PUT', at, {
              ...(values.description !== undefined ? { description: values.description } : {}),
            })
          : await call('DELETE', at);
      break;
    }
    case 'role:list': {
      res = await call('GET', '/admin/roles');
      if (res.ok && !values.json) {
        const builtIn = await builtInIdentifier();
        console.log(roleLines(res.body['items'] as RoleItem[], builtIn));
        return 0;
      }
      break;
    }
    case 'role:set': {
      if (!arg || values.permissions === undefined) {
        console.error(
          'usage: npm run admin -- role:set <name> --permissions a,b [--resource IDENTIFIER] [--description D]',
        );
        return 64;
      }
      // Replaces the role's grants on one resource: its grants on the others are sent back as read.
      const current = await call('GET', rolePath(arg));
      if (!current.ok && current.status !== 404) {
        res = current;
        break;
      }
      const target = values.resource ?? (await builtInIdentifier());
      const others = current.ok
        ? (current.body['grants'] as RoleItem['grants'])
            .filter((g) => g.resource !== target)
            .map((g) => ({ resource: g.resource, permissions: g.permissions }))
        : [];
      const permissions = list(values.permissions) ?? [];
      res = await call('PUT', rolePath(arg), {
        ...(values.resource === undefined
          ? { permissions, grants: others }
          : { grants: [...others, { resource: values.resource, permissions }] }),
        ...(values.description !== undefined ? { description: values.description } : {}),
      });
      break;
    }
    case 'role:delete':
      if (!arg) {
        console.error('usage: npm run admin -- role:delete <name>');
        return 64;
      }
      res = await call('DELETE', rolePath(arg));
      break;
    case 'permission:list':
      res = await call('GET', '/admin/permissions');
      if (res.ok && !values.json) {
        console.log((res.body['items'] as string[]).join('\n'));
        return 0;
      }
      break;
    case 'audit':
      res = await call(
        'GET',
        `/admin/audit${query({
          kind: values.kind,
          actor: values.actor,
          subject: values.subject,
          since: values.since,
          until: values.until,
          limit: values.limit,
        })}`,
      );
      break;
    default:
      console.error(`unknown command ${command}\n\n${USAGE}`);
      return 64;
  }

  if (values.json) console.log(JSON.stringify(res.body, null, 2));
  else if (!res.ok) console.error(`error ${res.status}: ${JSON.stringify(res.body)}`);
  else if (res.status === 204) console.log('done');
  else if (Array.isArray(res.body['items'])) console.log(rows(res.body['items']));
  else if (command.startsWith('resource:'))
    console.log(resourceLines(res.body as unknown as ResourceView));
  else {
    for (const [k, v] of Object.entries(res.body))
      console.log(`${k.padEnd(28)} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
    if (typeof res.body['client_secret'] === 'string')
      console.log('\nThe client secret is shown only this once.');
    if (typeof res.body['password'] === 'string')
      console.log('\nThe password is shown only this once.');
  }
  return res.ok ? 0 : 1;
}

/** Widest a column of a listing gets; longer values end in `…` (`--json` has them whole). */
const COLUMN_MAX = 36;

/** A cell: text as is, a list comma-joined, an object as JSON, nothing as `-`. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  const text = Array.isArray(value)
    ? value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(',')
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);
  return text.length > COLUMN_MAX ? `${text.slice(0, COLUMN_MAX - 1)}…` : text;
}

/** A listing as aligned rows under a header, one item a line, and how many there are. */
function rows(items: readonly Record<string, unknown>[]): string {
  if (items.length === 0) return '(none)';
  const columns = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const cells = items.map((item) => columns.map((c) => cell(item[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line), `(${items.length})`].join('\n');
}

interface RoleItem {
  name: string;
  permissions: string[];
  grants: { resource: string; resourceId: string; permissions: string[] }[];
  description: string;
  builtIn: boolean;
}

/**
 * Each role on a line with all its permissions on this server's API (a listing's cells would
 * cut them short), then its description and its grants on other resources, one a line.
 */
function roleLines(items: readonly RoleItem[], builtIn: string | undefined): string {
  if (items.length === 0) return '(none)';
  const width = Math.max(...items.map((r) => r.name.length));
  const indent = ' '.repeat(width + 2);
  return items
    .map((r) => {
      const about = [r.builtIn ? 'built-in' : '', r.description].filter(Boolean).join(': ');
      const elsewhere = r.grants
        .filter((g) => g.resource !== builtIn)
        .map((g) => `${indent}on ${g.resource}: ${g.permissions.join(',')}`);
      const head = `${r.name.padEnd(width)}  ${r.permissions.join(',') || '(no permissions)'}`;
      return [head, ...(about ? [`${indent}${about}`] : []), ...elsewhere].join('\n');
    })
    .join('\n');
}

/** A resource in resource:list: its permissions counted (resource:show names them). */
const resourceRow = (r: ResourceView) => ({
  id: r.id,
  identifier: r.identifier,
  name: r.name,
  permissions: r.permissions.length,
  ttl: r.accessTokenTtl ?? 'default',
  alg: r.signingAlg ?? 'default',
  dpop: r.dpopRequired,
  denyList: r.followsDenyList,
  builtIn: r.builtIn,
});

/** One resource: its settings a line each, then each permission with its description. */
function resourceLines(r: ResourceView): string {
  const { permissions, ...settings } = r;
  const lines = Object.entries(settings).map(
    ([k, v]) => `${k.padEnd(28)} ${v === null ? 'default' : String(v)}`,
  );
  const width = Math.max(0, ...permissions.map((p) => p.name.length));
  const listed = permissions.map((p) => `  ${p.name.padEnd(width)}  ${p.description}`.trimEnd());
  return [...lines, `permissions${permissions.length ? '' : ' (none)'}`, ...listed].join('\n');
}

/** The admin API is not where the configuration says: exit 69 (EX_UNAVAILABLE). */
class Unreachable extends Error {}

const HINT =
  'The auth server serves the admin API on 127.0.0.1:$ADMIN_PORT (default 4001): is it running, ' +
  'with the same ADMIN_PORT? ADMIN_URL overrides the address (README "Configuration").';

/** fetch's own message is "fetch failed"; the cause says what happened (ECONNREFUSED, …). */
function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if ((error as Error).name === 'TimeoutError') return 'no answer within 15 s';
  return [cause?.code, cause?.message ?? (error as Error).message].filter(Boolean).join(' ');
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof Unreachable) {
      console.error(`${error.message}\n${HINT}`);
      process.exit(69);
    }
    console.error((error as Error).message);
    process.exit(error instanceof ConfigError ? EX_CONFIG : 1);
  },
);
